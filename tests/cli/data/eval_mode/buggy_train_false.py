"""Buggy: validation every 5 steps inside the epoch with model.train(False), and no
model.train(True) after it: the steps after the first validation train in eval mode."""
import genesis as torch
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(320, 12)
y = x[:, :3].sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(x[:256], y[:256]), batch_size=32, shuffle=True)
x_val, y_val = x[256:], y[256:]

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 64),
                      nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.MSELoss()
step = 0
for epoch in range(2):
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 5 == 0:
            model.train(False)
            with torch.no_grad():
                val_loss = criterion(model(x_val), y_val).item()
            print(f"step {step} train {loss.item():.4f} val {val_loss:.4f}")
