"""Bug: `optimizer.zero_grad()` sits between `loss.backward()` and `optimizer.step()`, so
every step finds the gradients backward just computed already cleared (set to None): the
model never learns, and nothing fails or turns NaN to give it away.

`genesis trace` names the zero_grad() line. (The fix: clear the gradients before
loss.backward(), or after step().)
"""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x = genesis.randn(64, 3)
y = x.sum(dim=1, keepdim=True)

for step in range(20):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.zero_grad()  # bug: clears the gradients backward just computed
    optimizer.step()
print(f"loss {loss.item():.4f} (it does not go down)")
