"""A LARS optimizer written as a torch.optim.Optimizer subclass with its own step, for
the head of a classifier whose body Adam trains; the LARS gradients are never cleared
(only Adam's zero_grad is called), so they pile up across its steps."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class LARS(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, trust=0.001):
        super().__init__(params, dict(lr=lr, momentum=momentum, trust=trust))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if p.ndim > 1:
                    grad = grad * (group["trust"] * p.norm() / grad.norm().clamp_min(1e-12))
                mu = self.state[p].setdefault("mu", torch.zeros_like(p))
                mu.mul_(group["momentum"]).add_(grad)
                p.add_(mu, alpha=-group["lr"])


torch.manual_seed(0)
rng = np.random.default_rng(0)
body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
head = nn.Linear(16, 3)
adam = torch.optim.Adam(body.parameters(), lr=1e-3)
lars = LARS(head.parameters(), lr=1.0)
x = torch.from_numpy(rng.standard_normal((64, 6)).astype(np.float32))
y = x[:, :3].argmax(1)
for step in range(6):
    adam.zero_grad()
    loss = F.cross_entropy(head(body(x)), y)
    loss.backward()
    adam.step()
    lars.step()  # bug: nothing clears the head's gradients
