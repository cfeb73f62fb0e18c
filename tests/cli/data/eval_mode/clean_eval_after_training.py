"""Clean: training in train mode, then evaluation in eval mode once training has ended: a
test pass under no_grad and input gradients for a saliency map (a backward call, no
optimizer step)."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 10)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3),
                      nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(inputs), targets).backward()
        optimizer.step()

model.eval()
with torch.no_grad():
    print("accuracy", (model(x).argmax(dim=1) == y).float().mean().item())
sample = x[:4].clone().requires_grad_(True)
model(sample)[:, 1].sum().backward()
print("saliency", sample.grad.abs().mean(dim=0))
