"""Second-order MAML on sine regression: inner-loop SGD steps written with
torch.autograd.grad(create_graph=True) on a dict of parameters and
torch.func.functional_call, the outer loss backpropagated through the inner updates into
the meta-parameters, meta-gradients averaged over a task batch, and a first-order variant
(create_graph=False) on odd steps. Tasks come from NumPy."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)
rng = np.random.default_rng(0)
INNER_LR, INNER_STEPS, TASKS = 0.05, 2, 4

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Softplus(), nn.Linear(32, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def sample_task():
    amplitude, phase = rng.uniform(0.5, 2.0), rng.uniform(0, np.pi)
    xs = rng.uniform(-3, 3, size=(20, 1)).astype(np.float32)
    ys = (amplitude * np.sin(xs + phase)).astype(np.float32)
    return torch.from_numpy(xs[:10]), torch.from_numpy(ys[:10]), torch.from_numpy(xs[10:]), torch.from_numpy(ys[10:])


for step in range(8):
    meta_optimizer.zero_grad()
    second_order = step % 2 == 0
    outer_losses = []
    for _ in range(TASKS):
        x_support, y_support, x_query, y_query = sample_task()
        params = dict(model.named_parameters())
        for _ in range(INNER_STEPS):
            inner_loss = F.mse_loss(functional_call(model, params, (x_support,)), y_support)
            grads = torch.autograd.grad(inner_loss, params.values(), create_graph=second_order)
            params = {name: p - INNER_LR * g for (name, p), g in zip(params.items(), grads)}
        outer_loss = F.mse_loss(functional_call(model, params, (x_query,)), y_query)
        (outer_loss / TASKS).backward()
        outer_losses.append(outer_loss.item())
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    meta_optimizer.step()
    print(f"loss {step} {np.mean(outer_losses):.6f} {grad_norm.item():.6f}")
