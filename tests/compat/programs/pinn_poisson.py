"""A physics-informed network for the 1-D Poisson problem u''(x) = -pi^2 sin(pi x) with
u(0) = u(1) = 0: collocation points with requires_grad_(True), u' and u'' from
torch.autograd.grad(create_graph=True, grad_outputs=torch.ones_like), a residual plus
boundary loss, Adam for a few steps then LBFGS (strong-Wolfe line search) with a closure,
and the error against the exact solution sin(pi x)."""
import math
import os

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))

    def forward(self, x):
        return self.net(x)


model = PINN()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

x = torch.linspace(0, 1, 32).unsqueeze(1).requires_grad_(True)
boundary = torch.tensor([[0.0], [1.0]])


def pinn_loss():
    u = model(x)
    du = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, grad_outputs=torch.ones_like(du), create_graph=True)[0]
    residual = d2u + math.pi ** 2 * torch.sin(math.pi * x)
    return residual.pow(2).mean() + 10 * model(boundary).pow(2).mean()


adam = torch.optim.Adam(model.parameters(), lr=1e-2)
step = 0
for _ in range(5):
    adam.zero_grad()
    loss = pinn_loss()
    loss.backward()
    adam.step()
    print(f"loss {step} {loss.item():.8f}")
    step += 1

lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=10, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = pinn_loss()
    loss.backward()
    return loss


for _ in range(4):
    loss = lbfgs.step(closure)
    print(f"loss {step} {loss.item():.8f}")
    step += 1

with torch.no_grad():
    grid = torch.linspace(0, 1, 11).unsqueeze(1)
    error = (model(grid) - torch.sin(math.pi * grid)).abs().max()
print("max error", round(error.item(), 4))
