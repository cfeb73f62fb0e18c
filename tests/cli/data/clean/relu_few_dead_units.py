"""Clean: a ReLU MLP in which a few units of the middle layer are dead (their bias is -100:
4 of 32 units, say, pruned by hand) while the rest of the layer works. The dead units'
weights get zero gradients, but every parameter tensor still learns through the live units:
no dead layer, no parameter without gradient."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)

inputs = genesis.randn(512, 8)
targets = inputs[:, :3].sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(),
                      nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 1))
with genesis.no_grad():
    model[2].bias[:4] = -100.0   # 4 of the 32 units switched off
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
