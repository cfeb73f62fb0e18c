"""A small CNN on 1x12x12 images: Conv2d, BatchNorm2d, MaxPool2d, flatten, SGD with momentum
and weight decay."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3)
        self.fc = nn.Linear(16 * 2 * 2, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


rng = np.random.default_rng(1)
images = torch.from_numpy(rng.standard_normal((32, 1, 12, 12)).astype(np.float32))
targets = torch.from_numpy(rng.integers(0, 4, 32))
model = Net()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
criterion = nn.CrossEntropyLoss()
for step in range(6):
    batch = slice(step % 2 * 16, step % 2 * 16 + 16)
    optimizer.zero_grad()
    loss = criterion(model(images[batch]), targets[batch])
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f}")
