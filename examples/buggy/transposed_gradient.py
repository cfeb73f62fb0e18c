"""Bug: a hand-written square linear layer whose weight gradient is the transpose of the
right one (x^T g instead of g^T x). `genesis trace` names the weight input and says its
gradient is the transpose of the numerical one. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class SquareLinear(genesis.Function):
    """x @ weight.T for a square weight (a mixing layer that keeps the width)."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad @ weight
        grad_weight = x.T @ grad  # bug: the weight's gradient is grad.T @ x
        return grad_x, grad_weight


class Mixer(nn.Module):
    def __init__(self, width=5):
        super().__init__()
        self.mix = nn.Parameter(genesis.randn(width, width) * 0.3)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(SquareLinear.apply(x, self.mix).tanh()).squeeze(-1)


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=10)
options = parser.parse_args()
genesis.manual_seed(0)
inputs, targets = genesis.randn(16, 5), genesis.randn(16)
model = Mixer()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
for step in range(options.steps):
    loss = F.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
