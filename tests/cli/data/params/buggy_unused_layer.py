"""Bug: a layer is defined in __init__ but forward never calls it."""
import genesis
import genesis.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 8)  # BUG: never called
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.fc1(x).relu())


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
x, y = genesis.randn(32, 5), genesis.randn(32, 1)
for step in range(5):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
