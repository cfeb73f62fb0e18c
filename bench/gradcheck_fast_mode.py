"""gradcheck: exact (slow) mode vs fast mode on a 1,000-element float64 input.

Slow mode builds the whole Jacobian: two function evaluations per input element
and two backward runs per output element. Fast mode compares one projection
v^T J u per (output, input) pair: two evaluations per input and two backward
runs per output. Functions: an elementwise+reduction expression (one output
element) and the same expression without the reduction (1,000 outputs).

Run: python bench/gradcheck_fast_mode.py [--size N] [--repeat R]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import genesis
from genesis.autograd import gradcheck


def reduced(x):
    return ((x * 2 + 1).tanh() * x).sum()


def elementwise(x):
    return (x * 2 + 1).tanh() * x


def seconds(func, x, fast_mode: bool, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        assert gradcheck(func, x, fast_mode=fast_mode)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    data = np.random.default_rng(0).uniform(-1, 1, options.size)
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    print(f"{'function':<28} {'slow (s)':>9} {'fast (s)':>9} {'slow / fast':>12}")
    for name, func in (("elementwise + sum (1 out)", reduced),
                       (f"elementwise ({options.size} outs)", elementwise)):
        slow = seconds(func, x, False, options.repeat)
        fast = seconds(func, x, True, options.repeat)
        print(f"{name:<28} {slow:>9.4f} {fast:>9.4f} {slow / fast:>11.0f}x")


if __name__ == "__main__":
    main()
