"""Two custom torch.optim.Optimizer subclasses written as papers' pseudo-code: Lion
(sign of an interpolated momentum, decoupled weight decay) for the body and LARS
(layer-wise trust ratio, no adaptation on biases) for the head, each with a
@torch.no_grad() step and per-parameter state."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(8)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = exp_avg.mul(beta1).add(p.grad, alpha=1 - beta1)
                p.add_(torch.sign(update), alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
        return loss


class LARS(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=1e-4, trust=0.001):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay, trust=trust))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if p.ndim > 1:
                    grad = grad.add(p, alpha=group["weight_decay"])
                    p_norm, g_norm = torch.norm(p), torch.norm(grad)
                    ratio = torch.where((p_norm > 0) & (g_norm > 0), group["trust"] * p_norm / g_norm,
                                        torch.ones_like(p_norm))
                    grad = grad.mul(ratio)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(group["momentum"]).add_(grad)
                p.add_(mu, alpha=-group["lr"])


body = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
head = nn.Linear(32, 3)
model = nn.Sequential(body, head)
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

x = rng.standard_normal((96, 6)).astype(np.float32)
y = np.argmax(x[:, :3] + 0.5 * x[:, 3:], 1)
loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=16)
lion = Lion(body.parameters(), lr=3e-4, weight_decay=0.1)
lars = LARS(head.parameters(), lr=1.0)

step = 0
for epoch in range(3):
    for inputs, targets in loader:
        lion.zero_grad()
        lars.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        lion.step()
        lars.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
