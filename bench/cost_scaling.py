"""How time and memory grow with graph size and with tensor size, for `python SCRIPT` and
for `genesis trace SCRIPT`: the cost should stay linear.

(a) Graph size: a chain of N ops (`y = y * 1.0001 + 0.0`, bench/trace_big_graphs.py's
    script) on a 16-element tensor, one forward and one backward, for N = 1k, 10k, 100k
    and 1M. Per size: wall time, CPU time (all processes) and the largest resident set of
    the command, and the time per op after the 1k run's (start-up) time is taken off:
    flat per-op figures mean linear growth.
(b) Tensor size: a chain of 1,000 ops on tensors of 16, 4,096 (64x64), 65,536 (256x256)
    and 1,048,576 (1024x1024) elements.

Each command runs in a fresh process (compiled modules cached, as on a user's machine);
the median of `--repeat` interleaved runs is shown. Nothing is asserted.

Run: python bench/cost_scaling.py [--repeat 3] [--max-ops 1000000] [--max-traced-ops N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import trace_big_graphs
from trace_big_graphs import measured

TENSOR_SCRIPT = """\
import genesis

x = genesis.randn({size}, requires_grad=True)
y = x
for _ in range({iterations}):
    y = y * 1.0001 + 0.0
y.sum().backward()
print("grad norm", float((x.grad * x.grad).sum()) ** 0.5)
"""


def commands(script: Path, folder: Path) -> dict:
    return {"python": [sys.executable, str(script)],
            "genesis trace": [sys.executable, "-m", "genesis_cli", "trace", "--quiet",
                              "--out", str(folder / "trace"), str(script)]}


def median_runs(named: dict, repeat: int) -> dict:
    """{name: median figures} of the commands, run interleaved `repeat` times."""
    runs = {name: [] for name in named}
    for _ in range(repeat):
        for name, command in named.items():
            runs[name].append(measured(command))
    return {name: {key: statistics.median(run[key] for run in results)
                   for key in ("wall_s", "cpu_s", "largest_rss_mb")}
            for name, results in runs.items()}


def graph_sizes(options, folder: Path) -> None:
    print("(a) a chain of N ops on a 16-element tensor, forward and backward")
    print(f"  {'ops':>9} {'command':<14} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} "
          f"{'us/op past 1k':>14}")
    first = {}
    for ops in (1_000, 10_000, 100_000, 1_000_000):
        if ops > options.max_ops:
            break
        plain, traced, _ = trace_big_graphs.chain_commands(ops, folder)
        named = {"python": plain}
        if ops <= options.max_traced_ops:
            named["genesis trace"] = traced[:4] + ["--quiet"] + traced[4:]
        for name, figures in median_runs(named, options.repeat).items():
            first.setdefault(name, (ops, figures["wall_s"]))
            base_ops, base_wall = first[name]
            per_op = ((figures["wall_s"] - base_wall) / (ops - base_ops) * 1e6
                      if ops > base_ops else float("nan"))
            print(f"  {ops:>9,} {name:<14} {figures['wall_s']:>8.2f} {figures['cpu_s']:>8.2f} "
                  f"{figures['largest_rss_mb']:>8.0f} {per_op:>14.2f}")


def tensor_sizes(options, folder: Path) -> None:
    print("(b) a chain of 1,000 ops on tensors of growing size, forward and backward")
    print(f"  {'elements':>10} {'command':<14} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} "
          f"{'x python':>9}")
    for size in (16, 4_096, 65_536, 1_048_576):
        script = folder / f"tensor_{size}.py"
        script.write_text(TENSOR_SCRIPT.format(size=size, iterations=500), encoding="utf-8")
        figures = median_runs(commands(script, folder), options.repeat)
        for name, row in figures.items():
            print(f"  {size:>10,} {name:<14} {row['wall_s']:>8.2f} {row['cpu_s']:>8.2f} "
                  f"{row['largest_rss_mb']:>8.0f} "
                  f"{row['wall_s'] / figures['python']['wall_s']:>8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-ops", type=int, default=1_000_000)
    parser.add_argument("--max-traced-ops", type=int, default=1_000_000)
    options = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: cached modules
    with tempfile.TemporaryDirectory() as folder:
        graph_sizes(options, Path(folder))
        print()
        tensor_sizes(options, Path(folder))


if __name__ == "__main__":
    main()
