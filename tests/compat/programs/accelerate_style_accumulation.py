"""Gradient accumulation done by an optimizer wrapper, as Hugging Face Accelerate's
AcceleratedOptimizer does it: a torch.optim.Optimizer subclass around AdamW whose step()
and zero_grad() are called after every micro-batch but only act on every 4th (when the
gradients are synchronised); the training loop itself looks like plain training."""
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(30)


class GradientState:
    def __init__(self, every):
        self.every, self.count = every, 0

    @property
    def sync_gradients(self):
        return self.count % self.every == 0


class AcceleratedOptimizer(torch.optim.Optimizer):
    def __init__(self, optimizer, gradient_state):
        self.optimizer = optimizer
        self.gradient_state = gradient_state
        self.param_groups = optimizer.param_groups
        self.defaults = optimizer.defaults
        self.state = optimizer.state

    def zero_grad(self, set_to_none=None):
        if self.gradient_state.sync_gradients:
            self.optimizer.zero_grad(set_to_none=True if set_to_none is None else set_to_none)

    def step(self, closure=None):
        if self.gradient_state.sync_gradients:
            self.optimizer.step(closure)


model = nn.Sequential(nn.Linear(6, 24), nn.GELU(), nn.Linear(24, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

x = rng.standard_normal((128, 6)).astype(np.float32)
y = (x[:, :1] * x[:, 1:2] + x[:, 2:3]).astype(np.float32)
loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=8)
state = GradientState(every=4)
optimizer = AcceleratedOptimizer(torch.optim.AdamW(model.parameters(), lr=3e-3), state)
step = 0
for epoch in range(2):
    for inputs, targets in loader:
        state.count += 1
        loss = nn.functional.mse_loss(model(inputs), targets) / state.every
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if state.sync_gradients:
            print(f"loss {step} {loss.item() * state.every:.6f}")
            step += 1
