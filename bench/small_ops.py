"""Small-tensor forward+backward loop: genesis vs hand-written NumPy vs PyTorch eager.

The loop is `((x * 2 + 1).tanh() * x).sum().backward()` on a float32 tensor, at three
sizes: 32x32 (five tiny ops: the figure is per-op overhead, graph recording and the
backward engine, not arithmetic), 256x256 (in between) and 2048x2048 (the arithmetic and
the memory traffic dominate: what is left is the passes over memory each framework
makes). The NumPy row computes the same values and the gradient by hand, with no
framework at all.

Threads: PyTorch runs on one thread, as NumPy's elementwise functions do (no BLAS call
here; at 32x32 a second intra-op thread only adds synchronisation, badly so on a loaded
machine).

Run: python bench/small_ops.py [--quick] [--iterations N] [--sizes 32,256,2048]
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


SIZES = (32, 256, 2048)
CALLS = {32: 2000, 256: 200, 2048: 4}  # calls per timed run: each run takes about 0.1 s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--iterations", type=int,
                        help="calls per timed run at 32x32 (default 2000; scaled to the others)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="square sizes to run, comma-separated (default 32,256,2048)")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
    for size in (int(text) for text in args.sizes.split(",")):
        calls = CALLS.get(size, max(1, 2000 * 32 * 32 // (size * size)))
        if args.iterations:
            calls = max(1, args.iterations * calls // CALLS[32])
        if args.quick:
            calls = max(1, calls // 6)
        print_size(size, calls, repeat, torch)


def print_size(size: int, calls: int, repeat: int, torch) -> None:
    """The three rows for one size, after checking genesis's gradient against NumPy's."""
    data = np.random.default_rng(0).standard_normal((size, size)).astype(np.float32)
    x = genesis.tensor(data, requires_grad=True)
    rows = [("genesis", best_time(lambda: genesis_step(x), calls, repeat) * 1e6),
            ("numpy (by hand)", best_time(lambda: numpy_step(data), calls, repeat) * 1e6)]
    if torch is not None:
        tx = torch.tensor(data, requires_grad=True)
        rows.append(("pytorch eager", best_time(lambda: torch_step(tx), calls, repeat) * 1e6))
    genesis_step(x)
    np.testing.assert_allclose(x.grad.numpy(), numpy_step(data), rtol=1e-5, atol=1e-6)
    print(f"\n((x * 2 + 1).tanh() * x).sum().backward(), x {size}x{size} float32 (gradients "
          f"checked against the NumPy ones; best of {repeat} runs of {calls} calls)")
    print_table(rows, "us/iter")


if __name__ == "__main__":
    main()
