"""Bug: a learned gate computed through `.item()`: the Python number it makes carries no
gradient, so the gate's layer never learns. `genesis trace` names the `.item()` line and the
ops between the layer and the cut. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class GatedRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(6, 1)
        self.body = nn.Linear(6, 1)

    def forward(self, x):
        strength = self.gate(x).sigmoid().mean().item()  # bug: a Python number, no gradient
        return self.body(x).squeeze(-1) * strength


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=10)
options = parser.parse_args()
genesis.manual_seed(0)
model = GatedRegressor()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
inputs, targets = genesis.randn(32, 6), genesis.randn(32)
for step in range(options.steps):
    loss = F.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
