"""Quantisation-aware training with a straight-through estimator, written the PyTorch way:
`x + (x.round() - x).detach()` rounds in forward and passes the gradient straight through.
The rounded weights sit on round's steps (zero derivative, jumps at .5); the per-node
checks see round's kinks, not wrong gradients. `genesis trace --check-all` reports nothing.
"""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F


def quantize(x, scale: float):
    """Round to a grid of `scale`, with the straight-through gradient."""
    scaled = x / scale
    return (scaled + (scaled.round() - scaled).detach()) * scale


class QuantLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, quantize(self.weight, 0.05), self.bias)


class QuantNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = QuantLinear(4, 8)
        self.fc2 = QuantLinear(8, 1)

    def forward(self, x):
        return self.fc2(quantize(self.fc1(x).relu(), 0.25))


genesis.manual_seed(0)
model = QuantNet()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = genesis.randn(16, 4), genesis.randn(16, 1)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
