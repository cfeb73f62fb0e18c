"""Bug: a hand-written bias addition whose backward sums the gradient over the wrong axis
(the batch happens to be as large as the width, so the shapes still fit). `genesis trace`
says the bias's gradient is the output's gradient summed over axis 1 where the true one
sums over axis 0. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class AddBias(genesis.Function):
    """x + bias, the bias broadcast over the rows of x."""

    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.sum(1)  # bug: the rows are axis 0


class BiasedLinear(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.weight = nn.Parameter(genesis.randn(width, width) * 0.3)
        self.bias = nn.Parameter(genesis.zeros(width))

    def forward(self, x):
        return AddBias.apply(x @ self.weight, self.bias)


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=10)
options = parser.parse_args()
genesis.manual_seed(0)
model = BiasedLinear()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = genesis.randn(8, 8), genesis.randn(8, 8)
for step in range(options.steps):
    loss = F.mse_loss(model(inputs).tanh(), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
