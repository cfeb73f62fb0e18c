"""Bug: a custom activation whose hand-written backward has the wrong sign.

`genesis trace examples/buggy/wrong_backward.py` re-checks SoftSign.backward
against finite differences and points at the line that calls it.
"""
import genesis
import genesis.nn as nn


class SoftSign(genesis.Function):
    """x / (1 + |x|); its derivative is 1 / (1 + |x|)^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + x.abs())

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x.abs()) ** 2  # bug: should be (1 + |x|) ** 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(SoftSign.apply(self.hidden(x)))


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x, y = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(5):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("final loss", loss.item())
