"""Bug: a custom activation whose hand-written backward has the wrong sign.
`genesis trace` re-checks SoftSign.backward against finite differences and points at its
call. Options: --device cuda (train on the GPU), --steps N."""
import argparse

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


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--device", default="cpu")
parser.add_argument("--steps", type=int, default=5)
options = parser.parse_args()
genesis.manual_seed(0)
model = Net().to(options.device)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x = genesis.randn(32, 4, device=options.device)
y = genesis.randn(32, 1, device=options.device)
for step in range(options.steps):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("final loss", loss.item())
