"""Training written from scratch as in PyTorch's "what is torch.nn really?" tutorial: weights
as plain tensors with requires_grad (Xavier-scaled by hand, then requires_grad_()), the
update `p -= lr * p.grad` under torch.no_grad, `p.grad.zero_()` after it; then the same
with nn.Module parameters and a hand-written momentum buffer dict, and a log_softmax
written as x - x.exp().sum(-1).log().unsqueeze(-1)."""
import math
import os

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
x_all = rng.standard_normal((256, 10)).astype(np.float32)
y_all = (x_all[:, :3].sum(1) > 0).astype(np.int64) + (x_all[:, 3] > 1).astype(np.int64)

weights = torch.from_numpy(rng.standard_normal((10, 3)).astype(np.float32)) / math.sqrt(10)
weights.requires_grad_()
bias = torch.zeros(3, requires_grad=True)
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


lr, step = 0.5, 0
for i in range(5):
    xb, yb = torch.from_numpy(x_all[i * 32:(i + 1) * 32]), torch.from_numpy(y_all[i * 32:(i + 1) * 32])
    loss = nll(log_softmax(xb @ weights + bias), yb)
    loss.backward()
    with torch.no_grad():
        weights -= weights.grad * lr
        bias -= bias.grad * lr
        weights.grad.zero_()
        bias.grad.zero_()
    print(f"loss {step} {loss.item():.6f}")
    step += 1

momentum = {p: torch.zeros_like(p) for p in model.parameters()}
for i in range(5):
    xb, yb = torch.from_numpy(x_all[i * 32:(i + 1) * 32]), torch.from_numpy(y_all[i * 32:(i + 1) * 32])
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            momentum[p].mul_(0.9).add_(p.grad)
            p -= 0.1 * momentum[p]
        model.zero_grad()
    print(f"loss {step} {loss.item():.6f}")
    step += 1
