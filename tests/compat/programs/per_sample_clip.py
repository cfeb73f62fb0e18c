"""Per-sample gradients with torch.func, as in PyTorch's tutorial (functional_call, grad,
vmap), clipped sample by sample and averaged: the DP-SGD update without its noise. The
plain batch loss is backpropagated too, to report how much clipping changed the step."""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

rng = np.random.default_rng(3)
data = torch.from_numpy(rng.normal(size=(64, 8)).astype(np.float32))
targets = torch.from_numpy((data.numpy()[:, 0] + data.numpy()[:, 1] > 0).astype(np.int64))
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
max_norm = 1.0


def compute_loss(params, sample, target):
    prediction = functional_call(model, params, (sample.unsqueeze(0),))
    return F.cross_entropy(prediction, target.unsqueeze(0))


per_sample_grads = vmap(grad(compute_loss), in_dims=(None, 0, 0))

for step in range(6):
    batch = slice(16 * (step % 4), 16 * (step % 4 + 1))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data[batch]), targets[batch])
    loss.backward()
    params = {name: p.detach() for name, p in model.named_parameters()}
    grads = per_sample_grads(params, data[batch], targets[batch])
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    change = 0.0
    for name, p in model.named_parameters():
        clipped = (grads[name] * scale.view(-1, *[1] * (p.dim()))).mean(0)
        change += (clipped - p.grad).pow(2).sum().item()
        p.grad = clipped
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {change ** 0.5:.6f}")
