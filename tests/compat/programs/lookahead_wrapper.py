"""A Lookahead wrapper around AdamW (k=4 fast steps, then the slow weights move
alpha of the way and the fast weights are reset to them), written the way popular
re-implementations do it: a torch.optim.Optimizer subclass that never calls
Optimizer.__init__, taking the inner optimizer's param_groups and state, holding a copy
of slow weights and forwarding zero_grad/state_dict; the inner AdamW steps inside its
step."""
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(9)


class Lookahead(torch.optim.Optimizer):
    def __init__(self, optimizer, k=4, alpha=0.5):
        self.optimizer, self.k, self.alpha = optimizer, k, alpha
        self.defaults = optimizer.defaults
        self.param_groups = optimizer.param_groups
        self.state = optimizer.state
        self.counter = 0
        self.slow = [[p.detach().clone() for p in group["params"]] for group in self.param_groups]

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def step(self):
        loss = self.optimizer.step()
        self.counter += 1
        if self.counter % self.k == 0:
            for group, slow_group in zip(self.param_groups, self.slow):
                for fast, slow in zip(group["params"], slow_group):
                    slow.add_(fast - slow, alpha=self.alpha)
                    fast.copy_(slow)
        return loss

    def state_dict(self):
        return {"inner": self.optimizer.state_dict(), "counter": self.counter, "slow": self.slow}


model = nn.Sequential(nn.Linear(7, 24), nn.ELU(), nn.Dropout(0.0), nn.Linear(24, 24), nn.ELU(), nn.Linear(24, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

x = rng.standard_normal((96, 7)).astype(np.float32)
y = (np.tanh(x[:, :1] * x[:, 1:2]) + x[:, 2:3]).astype(np.float32)
loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=12)
optimizer = Lookahead(torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=1e-2), k=4, alpha=0.5)

step = 0
for epoch in range(2):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = nn.functional.l1_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
print("slow weights kept", len(optimizer.state_dict()["slow"][0]))
