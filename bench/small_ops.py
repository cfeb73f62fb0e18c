"""Small-tensor forward+backward loop: genesis vs hand-written NumPy vs PyTorch.

The loop is `((x * 2 + 1).tanh() * x).sum().backward()` on a 32x32 float32
tensor: five tiny ops, so the figure is dominated by per-op overhead.

Run: python bench/small_ops.py [--iterations N]
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import genesis


def genesis_step(x):
    x.grad = None
    ((x * 2 + 1).tanh() * x).sum().backward()


def numpy_step(x):
    """The same math and its gradient, by hand."""
    a = x * 2 + 1
    t = np.tanh(a)
    _ = (t * x).sum()
    grad_out = np.ones_like(x)
    grad_x = grad_out * t + (grad_out * x) * (1 - t * t) * 2
    return grad_x


def torch_step(torch, x):
    x.grad = None
    ((x * 2 + 1).tanh() * x).sum().backward()


def microseconds(step, iterations: int) -> float:
    step()
    best = min(timeit.repeat(step, number=iterations, repeat=5))
    return best / iterations * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=2000)
    iterations = parser.parse_args().iterations
    data = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)

    rows = []
    x = genesis.tensor(data, requires_grad=True)
    rows.append(("genesis", microseconds(lambda: genesis_step(x), iterations)))
    rows.append(("numpy (by hand)", microseconds(lambda: numpy_step(data), iterations)))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tx = torch.tensor(data, requires_grad=True)
        rows.append(("pytorch eager", microseconds(lambda: torch_step(torch, tx), iterations)))
    reference = rows[0][1]
    print(f"{'implementation':<18} {'us/iter':>9} {'genesis / this':>15}")
    for name, value in rows:
        print(f"{name:<18} {value:>9.1f} {reference / value:>15.2f}x")


if __name__ == "__main__":
    main()
