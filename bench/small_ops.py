"""Small-tensor forward+backward loop: genesis vs hand-written NumPy vs PyTorch eager.

The loop is `((x * 2 + 1).tanh() * x).sum().backward()` on a 32x32 float32 tensor:
five tiny ops, so the figure is dominated by per-op overhead (graph recording, the
backward engine), not by arithmetic. The NumPy row computes the same values and the
gradient by hand, with no framework at all.

Threads: PyTorch runs on one thread, as NumPy does here (no BLAS call at this size; a
second intra-op thread only adds synchronisation, badly so on a loaded machine).

Run: python bench/small_ops.py [--quick] [--iterations N]
"""
from __future__ import annotations

import argparse

import numpy as np

import genesis
from _harness import best_time, print_table


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


def torch_step(x):
    x.grad = None
    ((x * 2 + 1).tanh() * x).sum().backward()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--iterations", type=int, help="calls per timed run (default 2000)")
    args = parser.parse_args()
    iterations = args.iterations or (300 if args.quick else 2000)
    repeat = 3 if args.quick else 7
    data = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)

    x = genesis.tensor(data, requires_grad=True)
    rows = [("genesis", best_time(lambda: genesis_step(x), iterations, repeat) * 1e6),
            ("numpy (by hand)", best_time(lambda: numpy_step(data), iterations, repeat) * 1e6)]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tx = torch.tensor(data, requires_grad=True)
        rows.append(("pytorch eager", best_time(lambda: torch_step(tx), iterations, repeat) * 1e6))
    genesis_step(x)
    np.testing.assert_allclose(x.grad.numpy(), numpy_step(data), rtol=1e-5, atol=1e-6)
    print("((x * 2 + 1).tanh() * x).sum().backward(), x 32x32 float32 (gradients checked "
          "against the NumPy ones)")
    print_table(rows, "us/iter")


if __name__ == "__main__":
    main()
