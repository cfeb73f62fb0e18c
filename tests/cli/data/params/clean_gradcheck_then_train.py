"""Clean: a custom Function checked with gradcheck/gradgradcheck (on inputs that are not
parameters), then trained; the checks' own backward calls are not training steps."""
import genesis
import genesis.nn as nn
from genesis.autograd import gradcheck, gradgradcheck


class Square(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x):
        return Square.apply(self.linear(x))


genesis.manual_seed(0)
probe = genesis.randn(3, dtype=genesis.float64, requires_grad=True)
assert gradcheck(Square.apply, (probe,)) and gradgradcheck(Square.apply, (probe,))
model = Model()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
x, y = genesis.randn(32, 2), genesis.rand(32, 1)
for step in range(10):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
