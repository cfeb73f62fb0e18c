"""A residual MLP whose residual branches end in a zero-initialised Linear (as Fixup, or
torchvision's zero_init_residual, and DiT's adaLN-Zero do), so each block starts as the
identity; SGD with momentum and a MultiStepLR schedule on a regression task."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
x = rng.standard_normal((128, 16)).astype(np.float32)
y = (np.tanh(x[:, :4]).sum(1, keepdims=True) + 0.05 * rng.standard_normal((128, 1))).astype(np.float32)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class ResMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(16, 64)
        self.blocks = nn.Sequential(*[Block(64) for _ in range(3)])
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


model = ResMLP()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[8, 12], gamma=0.3)

step = 0
for epoch in range(4):
    for start in range(0, 128, 32):
        loss = F.mse_loss(model(torch.from_numpy(x[start:start + 32])), torch.from_numpy(y[start:start + 32]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
