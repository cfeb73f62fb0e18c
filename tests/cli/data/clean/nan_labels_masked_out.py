"""Clean: multi-target regression where missing labels are NaN and masked out of the loss
(the differences at NaN labels are NaN, and are indexed out). Must give no findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
X = torch.randn(200, 6)
Y = X[:, :3] * 2
Y[torch.rand(200, 3) < 0.3] = float("nan")
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(40):
    pred = model(X)
    mask = ~torch.isnan(Y)
    loss = ((pred - Y)[mask] ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
