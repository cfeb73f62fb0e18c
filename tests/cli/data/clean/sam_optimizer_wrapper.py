"""Clean: SAM (sharpness-aware minimisation) written as an Optimizer subclass that wraps a
base optimizer sharing its param_groups; two forward-backward passes per step. Must give no
findings."""
import genesis as torch
import genesis.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups
                                            for p in group["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.05, momentum=0.9)
crit = nn.CrossEntropyLoss()
x = torch.randn(128, 10)
y = torch.randint(0, 3, (128,))
for step in range(30):
    crit(model(x), y).backward()
    optimizer.first_step(zero_grad=True)
    crit(model(x), y).backward()
    optimizer.second_step(zero_grad=True)
print(crit(model(x), y).item())
