"""Cost of anomaly detection on the small-op loop of bench/small_ops.py.

The loop is `((x * 2 + 1).tanh() * x).sum().backward()` on a 32x32 float32
tensor: five tiny ops, so per-op overhead dominates. Anomaly mode records each
op's call site (a walk over the Python frames), checks forward outputs for
NaN/Inf (check_forward) and every backward result (check_nan).

Run: python bench/anomaly_overhead.py [--iterations N]
"""
from __future__ import annotations

import argparse
import contextlib
import timeit

import numpy as np

import genesis
from genesis.autograd import detect_anomaly


def step(x):
    x.grad = None
    ((x * 2 + 1).tanh() * x).sum().backward()


def microseconds(mode, x, iterations: int) -> float:
    with mode:
        step(x)
        best = min(timeit.repeat(lambda: step(x), number=iterations, repeat=5))
    return best / iterations * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=2000)
    iterations = parser.parse_args().iterations
    data = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    x = genesis.tensor(data, requires_grad=True)
    rows = [
        ("off", contextlib.nullcontext()),
        ("on: source lines only", detect_anomaly(check_nan=False, check_forward=False)),
        ("on: + check_nan", detect_anomaly(check_forward=False)),
        ("on: + check_nan, forward", detect_anomaly()),
    ]
    timings = [(name, microseconds(mode, x, iterations)) for name, mode in rows]
    reference = timings[0][1]
    print(f"{'anomaly mode':<26} {'us/iter':>9} {'this / off':>11}")
    for name, value in timings:
        print(f"{name:<26} {value:>9.1f} {value / reference:>10.2f}x")


if __name__ == "__main__":
    main()
