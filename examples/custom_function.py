"""A custom autograd Function with a hand-written backward, checked and then trained.

`SoftClip(x, limit) = limit * tanh(x / limit)` squashes x smoothly into
(-limit, limit); `limit` is a learnable tensor, so the backward returns a
gradient for both inputs. The script checks that backward against finite
differences with `genesis.autograd.gradcheck` (first and second order), then
trains a small regression model that uses it.

Run: python examples/custom_function.py [--steps N]
It prints the gradient checks (True), the loss going down and the learned limit.
"""
import argparse

import numpy as np

import genesis
import genesis.nn as nn
from genesis.autograd import gradcheck, gradgradcheck


class SoftClip(genesis.Function):
    """limit * tanh(x / limit): one gradient per forward input, in order."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x, limit)
        return limit * (x / limit).tanh()

    @staticmethod
    def backward(ctx, grad):
        x, limit = ctx.saved_tensors
        # Recomputed from the saved inputs rather than saved from forward: forward runs without
        # a graph, so a saved intermediate would be a constant here and second derivatives
        # (create_graph=True, gradgradcheck) would miss its dependence on x and limit.
        squashed = (x / limit).tanh()
        slope = 1 - squashed * squashed                            # d tanh(u) / du
        grad_x = grad * slope                                      # du/dx = 1 / limit cancels limit
        grad_limit = grad * (squashed - slope * x / limit)         # product rule, u = x / limit
        return grad_x, grad_limit                                  # broadcast back by the engine


class ClippedRegressor(nn.Module):
    """Linear -> tanh -> Linear -> SoftClip with a learnable limit."""

    def __init__(self, hidden: int = 32):
        super().__init__()
        self.hidden = nn.Linear(1, hidden)
        self.out = nn.Linear(hidden, 1)
        self.limit = nn.Parameter(genesis.tensor([2.0]))

    def forward(self, x):
        return SoftClip.apply(self.out(self.hidden(x).tanh()), self.limit)


def check_gradients() -> None:
    x = genesis.randn(4, 3, dtype=genesis.float64, requires_grad=True)
    limit = genesis.tensor([1.5], dtype=genesis.float64, requires_grad=True)
    print("gradcheck     :", gradcheck(SoftClip.apply, (x, limit)))
    print("gradgradcheck :", gradgradcheck(SoftClip.apply, (x, limit)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    steps = parser.parse_args().steps
    genesis.manual_seed(0)
    check_gradients()
    # Targets: a sine wave clipped at +-0.6, which the model can match by learning limit ~ 0.6.
    inputs = np.linspace(-3, 3, 128, dtype=np.float32)[:, None]
    targets = np.clip(np.sin(2 * inputs), -0.6, 0.6)
    x, y = genesis.tensor(inputs), genesis.tensor(targets)
    model = ClippedRegressor()
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.02)
    for step in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.5f}")
    print(f"learned limit: {model.limit.item():.3f}")


if __name__ == "__main__":
    main()
