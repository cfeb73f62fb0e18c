"""Bug: a fused gating unit (value * sigmoid(gate)) whose backward returns the two
gradients in the wrong order. `genesis trace` names both inputs and says their gradients
are swapped. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Gate(genesis.Function):
    """value * gate: the product at the heart of a gated linear unit."""

    @staticmethod
    def forward(ctx, value, gate):
        ctx.save_for_backward(value, gate)
        return value * gate

    @staticmethod
    def backward(ctx, grad):
        value, gate = ctx.saved_tensors
        grad_value = grad * gate
        grad_gate = grad * value
        return grad_gate, grad_value  # bug: the order of forward's inputs is (value, gate)


class GatedMLP(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.value = nn.Linear(4, width)
        self.gate = nn.Linear(4, width)
        self.out = nn.Linear(width, 3)

    def forward(self, x):
        return self.out(Gate.apply(self.value(x), self.gate(x).sigmoid()))


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=10)
options = parser.parse_args()
genesis.manual_seed(0)
features, labels = genesis.randn(32, 4), genesis.randint(0, 3, (32,))
model = GatedMLP()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
for step in range(options.steps):
    loss = F.cross_entropy(model(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
