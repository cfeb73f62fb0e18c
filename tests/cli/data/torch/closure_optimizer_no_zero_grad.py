"""A hand-written momentum SGD (its own step, calling the closure it is given) whose
closure forgets optimizer.zero_grad(): every step applies the sum of all gradients."""
import numpy as np
import torch
import torch.nn as nn


class MomentumSGD(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    buf = self.state[p].setdefault("buf", torch.zeros_like(p))
                    buf.mul_(group["momentum"]).add_(p.grad)
                    p.sub_(group["lr"] * buf)
        return loss


torch.manual_seed(0)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = MomentumSGD(model.parameters(), lr=0.01)
x = torch.from_numpy(rng.standard_normal((48, 5)).astype(np.float32))
y = x.sum(1, keepdim=True)


def closure():
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(6):
    optimizer.step(closure)  # bug: the closure never zeroes the gradients
