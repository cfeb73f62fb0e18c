"""Capture and render timings: small, 1,000-op and 100,000-op graphs.

Prints seconds per phase and drawn-node counts; the targets are capture +
render of 1,000 ops under 1 s (system dot), and for 100,000 ops capture under
2 s and a collapsed SVG under 5 s. Also compares the embedded Graphviz with
the system `dot` on the same drawing.

Run: python bench/capture_render.py [--ops N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import genesis  # noqa: E402
import viz  # noqa: E402
from viz.backends import EMBEDDED, SYSTEM, run_graphviz  # noqa: E402
from viz.collapse import build_view  # noqa: E402


def chain(ops: int):
    """y = ((x * a) * a) ... : one long run of ops."""
    x = genesis.randn(16, requires_grad=True)
    y = x
    for _ in range(ops):
        y = y * 1.0001
    return y.sum()


def unrolled_mlp(ops: int, layers: int = 8):
    """An MLP of `layers` tanh layers applied over and over (3 ops per layer), like an RNN
    unrolled over steps: parameters reused, one long dependency chain."""
    weights = [genesis.randn(16, 16, requires_grad=True) for _ in range(layers)]
    biases = [genesis.zeros(16, requires_grad=True) for _ in range(layers)]
    h = genesis.randn(4, 16)
    made = 0
    while made < ops - 1:
        layer = (made // 3) % layers
        h = (h @ weights[layer] + biases[layer]).tanh()
        made += 3
    return h.sum()


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def measure(name: str, build, ops: int, backend: str, **options) -> None:
    output, build_s = timed(build, ops)
    graph, capture_s = timed(genesis.debug.capture_graph, output)
    view = build_view(graph, **options)
    dot, dot_s = timed(viz.to_dot, graph, **options)
    svg, layout_s = timed(run_graphviz, dot.source, "svg", backend)
    print(f"{name:<24} {len(graph.nodes):>9,} {build_s:>8.2f} {capture_s:>8.2f} {dot_s:>8.2f} "
          f"{layout_s:>8.2f} {capture_s + dot_s + layout_s:>8.2f} {len(view.items):>6}  {backend}")
    del svg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=100_000)
    ops = parser.parse_args().ops
    backends = [SYSTEM] if shutil.which("dot") else []
    backends.append(EMBEDDED)
    print(f"{'graph':<24} {'nodes':>9} {'build s':>8} {'capture':>8} {'to_dot':>8} {'layout':>8} "
          f"{'total':>8} {'drawn':>6}  backend")
    for backend in backends:
        measure("chain 1,000", chain, 1_000, backend)
        measure("unrolled MLP 1,000", unrolled_mlp, 1_000, backend)
        measure("chain 1,000 uncollapsed", chain, 1_000, backend, max_nodes=None)
        measure("MLP 1,000 uncollapsed", unrolled_mlp, 1_000, backend, max_nodes=None)
    for backend in backends:
        measure(f"chain {ops:,}", chain, ops, backend)
        measure(f"unrolled MLP {ops:,}", unrolled_mlp, ops, backend)
    print("total = capture + to_dot (including collapsing) + Graphviz layout; build = running the ops")


if __name__ == "__main__":
    main()
