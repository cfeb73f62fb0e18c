"""Clean: a straight-through estimator: the forward uses rounded weights, the gradient
goes to the real ones through `w + (round(w) - w).detach()`."""
import genesis
import genesis.nn as nn


class QuantLinear(nn.Module):
    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(genesis.randn(outputs, inputs) * 0.5)
        self.bias = nn.Parameter(genesis.zeros(outputs))

    def forward(self, x):
        step = 0.25
        quantised = (self.weight / step).round() * step
        weight = self.weight + (quantised - self.weight).detach()
        return x @ weight.T + self.bias


genesis.manual_seed(0)
model = nn.Sequential(QuantLinear(4, 8), nn.ReLU(), QuantLinear(8, 1))
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x = genesis.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
for step in range(30):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
