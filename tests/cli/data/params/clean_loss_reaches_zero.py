"""Clean: a model that fits its targets exactly, so the loss and every gradient reach ~0."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
x = genesis.randn(64, 3)
y = x @ genesis.tensor([[1.5], [-2.0], [0.5]]) + 0.25
model = nn.Linear(3, 1)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.3)
for step in range(300):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3g}")
