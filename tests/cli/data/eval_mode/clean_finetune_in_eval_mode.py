"""Clean: fine-tuning the whole model in eval mode from the start (pretrained BatchNorm
statistics kept, no dropout): model.eval() before the first step, and the mode never
changes."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 10)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5),
                      nn.Linear(32, 2))
model.eval()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for epoch in range(2):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
