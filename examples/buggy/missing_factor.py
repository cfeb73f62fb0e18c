"""Bug: a fused weight-decay penalty whose hand-written backward forgot a factor 2.
`genesis trace` says which input's gradient is wrong, the line that computes it, and that
the analytical gradient is exactly half the numerical one. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class SquaredNorm(genesis.Function):
    """sum(w ** 2): the L2 penalty of a weight, in one node."""

    @staticmethod
    def forward(ctx, weight):
        ctx.save_for_backward(weight)
        return (weight * weight).sum()

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx.saved_tensors
        grad_weight = grad * weight  # bug: d/dw sum(w^2) is 2 * w
        return grad_weight


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=20)
options = parser.parse_args()
genesis.manual_seed(0)
inputs = genesis.randn(64, 6)
targets = inputs @ genesis.randn(6) + 0.1 * genesis.randn(64)
model = Regressor()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
for step in range(options.steps):
    loss = F.mse_loss(model(inputs), targets) + 1e-3 * SquaredNorm.apply(model.linear.weight)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
