"""Fitting a small curve with L-BFGS and a strong-Wolfe line search, in float64 (as such
fits usually are: the line search's branches are sensitive to float32 rounding, which
differs between BLAS builds): the closure re-evaluates the loss, as PyTorch's LBFGS
requires."""
import os

import numpy as np
import torch

torch.manual_seed(0)  # (unseeded, each run starts elsewhere, and from some starts the line
rng = np.random.default_rng(5)  # search's branches follow the last bits of BLAS's rounding)
x = torch.from_numpy(np.linspace(-2, 2, 40)).unsqueeze(1)
y = torch.sin(x) + torch.from_numpy(rng.normal(0, 0.05, (40, 1)))
model = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=10, history_size=10,
                              line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(5):
    loss = optimizer.step(closure)
    print(f"loss {step} {loss.item():.6f}")
