"""Clean: a binary classifier ending in a sigmoid that becomes confident as it learns
(most outputs below 0.01 or above 0.99 by the end): the model's output, not a hidden layer
saturated from the start."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
inputs = genesis.randn(512, 6)
labels = (inputs[:, 0] + inputs[:, 1] > 0).float().unsqueeze(1)
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.BCELoss()
for epoch in range(8):
    for x, y in loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
with genesis.no_grad():
    confident = ((model(inputs) < 0.01) | (model(inputs) > 0.99)).float().mean().item()
print(f"loss {loss.item():.4f}, confident outputs {confident:.0%}")
