"""Clean: validation with model.eval() and no model.train() after it, in a model whose
modules behave the same in both modes: ReLU, LayerNorm, a Dropout with p=0 and a BatchNorm
that tracks no running statistics. eval() changes nothing the steps compute."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 8)
y = x[:, :2].sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(8, 32), nn.LayerNorm(32), nn.ReLU(), nn.Dropout(0.0),
                      nn.Linear(32, 32), nn.BatchNorm1d(32, track_running_stats=False),
                      nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        F.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(f"epoch {epoch} val {F.mse_loss(model(x[:32]), y[:32]).item():.4f}")
