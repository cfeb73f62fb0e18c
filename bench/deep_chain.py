"""A deep graph: a chain of N small ops, forward then backward, genesis against PyTorch
eager side by side in this process (issue 23's target: 20,000 ops at most 1.0x PyTorch).

The chain is `y = y * 1.0001 + 0.0001` repeated N / 2 times on a 16-element float32
tensor, then `y.sum().backward()`: the figure is per-op overhead of building the graph
and running it backward, nothing else. Also shown: the forward alone, and the time
Python's cyclic garbage collector spent during the genesis run (`gc.callbacks`): autograd
nodes are Python objects that the collector walks as the graph grows.

Run: python bench/deep_chain.py [--ops 20000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np

import genesis
from _harness import torch_matching_numpy


def chain(module, x, iterations: int):
    y = x
    for _ in range(iterations):
        y = y * 1.0001 + 0.0001
    return y


def timed_run(module, iterations: int) -> tuple:
    """(forward seconds, forward + backward seconds, gradient) of one chain."""
    x = module.ones(16, requires_grad=True)
    started = time.perf_counter()
    y = chain(module, x, iterations)
    forward = time.perf_counter() - started
    y.sum().backward()
    total = time.perf_counter() - started
    return forward, total, x.grad.detach().numpy()


class CollectorClock:
    """Seconds Python's cyclic collector ran while this is installed."""

    def __init__(self):
        self.seconds, self.collections, self._started = 0.0, 0, 0.0

    def __call__(self, phase, info) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections += 1

    def __enter__(self):
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        gc.callbacks.remove(self)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    iterations = options.ops // 2
    torch = torch_matching_numpy()
    runs = {"genesis": [], "pytorch eager": []}
    collector = []
    for _ in range(options.repeat):  # interleaved: the machine's drift hits both alike
        with CollectorClock() as clock:
            runs["genesis"].append(timed_run(genesis, iterations))
        collector.append((clock.seconds, clock.collections))
        if torch is not None:
            runs["pytorch eager"].append(timed_run(torch, iterations))
    if torch is not None:
        np.testing.assert_allclose(runs["genesis"][0][2], runs["pytorch eager"][0][2], rtol=1e-4)
    best = {name: min(results, key=lambda run: run[1]) for name, results in runs.items() if results}
    reference = best["genesis"][1]
    print(f"chain of {options.ops:,} ops on 16 elements, forward + backward (best of {options.repeat})")
    print(f"{'implementation':<16} {'forward ms':>11} {'total ms':>10} {'us/op':>7} {'genesis / this':>15}")
    for name, (forward, total, _) in best.items():
        print(f"{name:<16} {forward * 1e3:11.1f} {total * 1e3:10.1f} {total / options.ops * 1e6:7.2f} "
              f"{reference / total:14.2f}x")
    seconds, collections = min(collector)
    print(f"genesis: the cyclic collector ran {collections} times, {seconds * 1e3:.1f} ms of the run "
          "(the least of the runs)")


if __name__ == "__main__":
    main()
