"""Clean: a temperature-scaled activation annealed between forward and backward, written
right (the forward keeps the temperature it used on ctx), next to a Function whose backward
counts its calls on ctx. Nothing here reads state that changed after its forward."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class TemperedSigmoid(genesis.Function):
    @staticmethod
    def forward(ctx, x, layer):
        ctx.save_for_backward(x)
        ctx.temperature = layer.temperature  # the value this forward used
        return (x * ctx.temperature).sigmoid()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = (x * ctx.temperature).sigmoid()
        return grad * s * (1 - s) * ctx.temperature, None


class Doubled(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.backward_calls = 0
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        ctx.backward_calls += 1
        return grad * 2


class Tempered(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = 2.0

    def forward(self, x):
        return Doubled.apply(TemperedSigmoid.apply(x, self))


genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), Tempered(), nn.Linear(8, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = genesis.randn(16, 4), genesis.randn(16, 1)
for step in range(3):
    prediction = model(inputs)
    model[1].temperature *= 0.9  # annealed before the backward
    loss = F.mse_loss(prediction, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
