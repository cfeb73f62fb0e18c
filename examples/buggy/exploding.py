"""Bug: a learning rate far too high for this regression, so every step overshoots
and the gradients grow by orders of magnitude."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=3.0)   # bug: lr ~100x too high
x = genesis.randn(128, 8) * 3
y = (x ** 2).sum(dim=1, keepdim=True)
for step in range(12):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4g}")
