"""A Lookahead wrapper (an Optimizer subclass that never calls Optimizer.__init__ and
steps an inner AdamW inside its own step) in a loop that never clears the gradients."""
import numpy as np
import torch
import torch.nn as nn


class Lookahead(torch.optim.Optimizer):
    def __init__(self, optimizer, k=2, alpha=0.5):
        self.optimizer, self.k, self.alpha, self.counter = optimizer, k, alpha, 0
        self.param_groups, self.state = optimizer.param_groups, optimizer.state
        self.slow = [p.detach().clone() for group in self.param_groups for p in group["params"]]

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none)

    @torch.no_grad()
    def step(self):
        self.optimizer.step()
        self.counter += 1
        if self.counter % self.k == 0:
            fast = [p for group in self.param_groups for p in group["params"]]
            for slow, p in zip(self.slow, fast):
                slow.add_(p - slow, alpha=self.alpha)
                p.copy_(slow)


torch.manual_seed(0)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ELU(), nn.Linear(16, 1))
optimizer = Lookahead(torch.optim.AdamW(model.parameters(), lr=5e-3))
x = torch.from_numpy(rng.standard_normal((48, 4)).astype(np.float32))
y = x[:, :1] * x[:, 1:2]
for step in range(6):
    loss = nn.functional.l1_loss(model(x), y)
    loss.backward()
    optimizer.step()  # bug: no optimizer.zero_grad() anywhere
