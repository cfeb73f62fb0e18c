"""Clean: an exponential moving average of the weights kept in a copy of the model, updated
under no_grad after each step and evaluated in eval mode every epoch; the model itself
trains in train mode (model.train() each epoch)."""
import copy

import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 10)
y = (x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
                      nn.Linear(32, 2))
ema = copy.deepcopy(model)
ema.eval()
for param in ema.parameters():
    param.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(3):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
        with torch.no_grad():
            for average, param in zip(ema.parameters(), model.parameters()):
                average.lerp_(param, 0.1)
            for average, buffer in zip(ema.buffers(), model.buffers()):
                average.copy_(buffer)
    ema.eval()
    with torch.no_grad():
        accuracy = (ema(x).argmax(dim=1) == y).float().mean().item()
    print(f"epoch {epoch} ema accuracy {accuracy:.3f}")
