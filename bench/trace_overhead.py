"""What `genesis trace` costs on a training script: wall time of `python SCRIPT` against
`genesis trace SCRIPT` (everything on: graph, statistics, gradient checks, NaN watch,
optimizer and activation watches, history, metrics.jsonl, SVG, JSON and report.html) and
`genesis trace --no-check SCRIPT` (the same without re-checking Functions against finite
differences), each in a fresh process, run interleaved (plain, traced, no-check, plain,
...) so the machine's drift hits all three alike; the median of each is compared. One
untimed run first fills the caches of compiled modules, as on a user's machine.

The default script is bench/scripts/train_classifier.py, written as training scripts are
(DataLoader, nn.Module, AdamW, a scheduler, a validation pass). Targets (issue 22): the
default trace within 1.5x of plain python, --no-check within 1.15x.

Beside the wall time, the processor time of each run (user + system, of every process it
started: `genesis trace` is two processes, and `dot`) is printed too: on a shared machine
whose other tenants take the processors, wall times spread widely; processor times less so.

Run: python bench/trace_overhead.py [--script S] [--repeat 5] [--no-html] [-- SCRIPT ARGS]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# As a user's machine runs them: with compiled modules cached (a sandbox may set
# PYTHONDONTWRITEBYTECODE, and every process would compile all of genesis again).
ENVIRONMENT = {**{key: value for key, value in os.environ.items()
                  if key != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": ROOT}


def timed(command: list) -> tuple:
    """(wall seconds, processor seconds) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, check=False, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=ROOT, env=ENVIRONMENT)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: genesis trace found something
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script", default="bench/scripts/train_classifier.py")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-html", action="store_true", help="do not write report.html")
    parser.add_argument("script_args", nargs="*")
    options = parser.parse_args()
    out = tempfile.mkdtemp()
    html = ["--no-html"] if options.no_html else []
    plain = [sys.executable, options.script, *options.script_args]
    trace = [sys.executable, "-m", "genesis_cli", "trace", "--quiet", "--out", out, *html]
    rows = {"python SCRIPT": plain,
            "genesis trace": trace + [options.script, *options.script_args],
            "genesis trace --no-check": trace + ["--no-check", options.script,
                                                 *options.script_args]}
    times = {name: [] for name in rows}
    timed(rows["genesis trace --no-check"])  # untimed: fills the caches of compiled modules
    for _ in range(options.repeat):
        for name, command in rows.items():
            times[name].append(timed(command))
    print(f"{options.script} {' '.join(options.script_args)} "
          f"(median of {options.repeat} interleaved runs each)")
    for column, label in ((0, "wall time"), (1, "processor time (user + system)")):
        reference = statistics.median(run[column] for run in times["python SCRIPT"])
        print(f"  {label}")
        for name, runs in times.items():
            seconds = [run[column] for run in runs]
            middle = statistics.median(seconds)
            print(f"    {name:<26} {middle:7.2f} s   {middle / reference:5.2f}x   "
                  f"(min {min(seconds):.2f}, max {max(seconds):.2f})")

if __name__ == "__main__":
    main()
