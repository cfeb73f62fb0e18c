"""Clean: gradient accumulation on purpose, four backward calls per optimizer step."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = genesis.randn(128, 6)
y = genesis.randint(0, 3, (128,))
accumulate = 4
for step in range(40):
    optimizer.zero_grad()
    for part in range(accumulate):
        rows = slice(part * 32, (part + 1) * 32)
        loss = nn.functional.cross_entropy(model(x[rows]), y[rows]) / accumulate
        loss.backward()
    optimizer.step()
print(f"loss {loss.item() * accumulate:.4f}")
