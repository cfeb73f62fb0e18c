"""What `genesis trace --no-check` costs on a training script: wall time of
`python SCRIPT` vs `genesis trace --no-check SCRIPT` (graph, statistics, NaN watch,
parameter norms, SVG and JSON written), each in a fresh process, side by side.

Run: python bench/trace_overhead.py [--script examples/mlp.py] [--repeat 3] [-- SCRIPT ARGS]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wall_time(command: list) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script", default="examples/mlp.py")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--html", action="store_true", help="also write report.html")
    parser.add_argument("script_args", nargs="*")
    options = parser.parse_args()
    out = tempfile.mkdtemp()
    plain = [sys.executable, options.script, *options.script_args]
    traced = [sys.executable, "-m", "genesis_cli", "trace", "--no-check", "--out", out,
              "--html" if options.html else "--no-html", options.script, *options.script_args]
    rows = [("python SCRIPT", plain), ("genesis trace --no-check", traced)]
    times = {name: min(wall_time(command) for _ in range(options.repeat)) for name, command in rows}
    reference = times["python SCRIPT"]
    print(f"{options.script} {' '.join(options.script_args)} (best of {options.repeat})")
    for name, seconds in times.items():
        print(f"  {name:<26} {seconds:7.2f} s   {seconds / reference:5.2f}x")


if __name__ == "__main__":
    main()
