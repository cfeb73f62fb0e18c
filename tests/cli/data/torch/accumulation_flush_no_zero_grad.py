"""Gradient accumulation over 3 batches, with the epoch's last, partial group (7 batches
per epoch) flushed by a step() of its own that no zero_grad() follows: its gradients
are carried into the next epoch's first step."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
ACCUM = 3
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
x = rng.standard_normal((70, 5)).astype(np.float32)
loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(x[:, :1] * 2)), batch_size=10)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
optimizer.zero_grad()
for epoch in range(2):
    for i, (inputs, targets) in enumerate(loader):
        loss = nn.functional.mse_loss(model(inputs), targets) / ACCUM
        loss.backward()
        if (i + 1) % ACCUM == 0:
            optimizer.step()  # every ACCUM batches
            optimizer.zero_grad()
        elif i + 1 == len(loader):
            optimizer.step()  # bug: the partial group's step, with no zero_grad() after it
