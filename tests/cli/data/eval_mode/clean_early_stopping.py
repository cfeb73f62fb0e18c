"""Clean: training in train mode (set once, before the loop), validation with model.eval()
every epoch, and the loop stops right after a validation pass (early stopping): no training
step runs in eval mode. A final test pass follows in eval mode."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] - x[:, 2] > 0).long()
loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=64, shuffle=True)
x_val, y_val = x[192:], y[192:]

model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
                      nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.train()
epoch = 0
while True:
    for inputs, targets in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = F.cross_entropy(model(x_val), y_val).item()
    epoch += 1
    print(f"epoch {epoch} val {val_loss:.4f}")
    if epoch == 3 or val_loss < 0.2:
        break  # stop after the validation: the model stays in eval mode for the test below
    model.train()
with torch.no_grad():
    print("test accuracy", (model(x_val).argmax(dim=1) == y_val).float().mean().item())
