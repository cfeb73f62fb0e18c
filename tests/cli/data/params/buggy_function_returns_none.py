"""Bug: a custom Function's backward returns None for its input, so no gradient comes back
to the layer before it (the Function's forward runs with gradients disabled, as every
Function's does: that is no cut)."""
import genesis
import genesis.nn as nn


class Swish(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = genesis.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        return None  # BUG: should be grad * (s + x * s * (1 - s))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(Swish.apply(self.fc1(x)))  # USE: Swish


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x = genesis.randn(64, 4)
y = x[:, :1] * 0.5
for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
