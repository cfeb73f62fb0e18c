"""Bug: a temperature-scaled activation whose backward reads the layer's temperature when
it runs, not the one its forward used; the schedule anneals the temperature between the
forward and the backward. Re-checked on its own the Function looks right: `genesis trace`
finds the backward's answer changed between forward and backward and names
ctx.layer.temperature. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class TemperedSigmoid(genesis.Function):
    """sigmoid(x * t), t the layer's temperature."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.save_for_backward(x)
        ctx.layer = layer
        return (x * layer.temperature).sigmoid()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = ctx.layer.temperature  # bug: the temperature now, not the forward's
        s = (x * t).sigmoid()
        return grad * s * (1 - s) * t, None


class Tempered(nn.Module):
    def __init__(self, temperature=2.0):
        super().__init__()
        self.temperature = temperature

    def anneal(self):
        self.temperature *= 0.9

    def forward(self, x):
        return TemperedSigmoid.apply(x, self)


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=10)
options = parser.parse_args()
genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), Tempered(), nn.Linear(16, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(options.steps):
    prediction = model(inputs)
    model[1].anneal()  # the schedule steps before the backward that needs the old value
    loss = F.mse_loss(prediction, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
