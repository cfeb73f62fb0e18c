"""Bug: the layer reads its weight through .data, which takes it out of the graph."""
import genesis
import genesis.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
        self.gain = nn.Parameter(genesis.ones(2))

    def forward(self, x):
        weight = self.proj.weight.data  # BUG: .data
        return (x @ weight.T + self.proj.bias) * self.gain


genesis.manual_seed(0)
model = Scaled()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x, y = genesis.randn(32, 4), genesis.randn(32, 2)
for step in range(5):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
