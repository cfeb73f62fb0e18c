"""What a watched training step costs, counted in machine instructions: a figure that does
not move with the machine's load, unlike the wall times of `trace_step_costs.py` and
`trace_overhead.py` (on a shared 2-core machine those spread by 20-40% from run to run).

Each run is one process under Valgrind's callgrind, which counts every instruction the
process executes (about 50x slower than a plain run; the runs go side by side on the
CPUs). BLAS runs on one thread, so the count does not depend on scheduling. The step is
train_classifier's, as in `trace_step_costs.py`: plain, and under what `genesis trace
--no-check` sets up in the script's process. Each is run for two numbers of steps; the
difference, divided by the extra steps, is what one step of a long run costs, and the
rest is the fixed part (imports, data, the recorded first step). Each mode runs once
first, uncounted, so that every run reads its modules compiled: a run that compiled one
and its partner that did not would differ by the compilation (millions of instructions,
spread over the steps between the two runs). The watch does some work by the clock
(progress.json every second, the step records every quarter second): under callgrind, where
a step takes about 50 times as long, that work would come once every step or two instead of
once in hundreds, and with the machine's load (it was 1 M of a step's 3 M extra). So the
watch reads a `StepClock` that runs at a plain step's native time a step, measured here
first (`--step-seconds` fixes it). The functions whose counts grow most under the watch are
listed too (callgrind's names: the interpreter's own functions stand for Python code).

Instructions are not time: BLAS code runs several instructions a cycle, interpreted Python
fewer, so the two ratios differ (for this step the time ratio has been the smaller). Use
this to see whether a change to the watch makes it cheaper; use the timed benchmarks for
the seconds.

Needs `valgrind` (Debian: apt-get install valgrind).

Run: python bench/trace_step_instructions.py [--steps 10 40] [--top 15] [--step-seconds S]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
from concurrent.futures import ThreadPoolExecutor
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODES = ("plain", "watched")


def run_steps(mode: str, steps: int, step_seconds: float = 0.0) -> None:
    """In the measured process: `steps` training steps, plain or watched; the watch's clock
    runs `step_seconds` a step (see `StepClock`)."""
    _load_bench_modules()
    import trace_step_costs
    import genesis
    from genesis.utils.data import TensorDataset
    trace_step_costs.WARM_UP = 0
    genesis.manual_seed(0)
    data = TensorDataset(genesis.randn(1024, 1, 28, 28), genesis.randint(0, 10, (1024,)))
    clock = StepClock(step_seconds)
    with tempfile.TemporaryDirectory() as folder, clock.installed():
        setting = trace_step_costs.watched(folder) if mode == "watched" else contextlib.nullcontext()
        trace_step_costs.step_times(data, steps, setting, each_step=clock.tick)


class StepClock:
    """The clock the watch reads, as a real run of the step would show it: `step_seconds`
    pass a step. The watch does some work by the clock (progress.json every second, the
    step records every quarter second); under callgrind a step takes about 50 times as long
    as it does natively, so by the real clock that work would come 50 times as often a step
    as it does in a real run, and with the machine's load."""

    def __init__(self, step_seconds: float):
        self.step_seconds = step_seconds
        self.now = 0.0

    def tick(self) -> None:
        self.now += self.step_seconds

    def monotonic(self) -> float:
        return self.now

    perf_counter = monotonic

    def __getattr__(self, name):  # time.time(), time.sleep(): the real ones
        return getattr(time, name)

    @contextlib.contextmanager
    def installed(self):
        """The watch's modules read this clock inside the block."""
        from genesis.debug import journal, session
        modules = (journal, session)
        for module in modules:
            module.time = self
        try:
            yield
        finally:
            for module in modules:
                module.time = time


def native_step_seconds(steps: int = 40) -> float:
    """The median seconds of a plain step, run natively in this process (after WARM_UP)."""
    _load_bench_modules()
    import trace_step_costs
    import genesis
    from genesis.utils.data import TensorDataset
    genesis.manual_seed(0)
    data = TensorDataset(genesis.randn(1024, 1, 28, 28), genesis.randint(0, 10, (1024,)))
    return statistics.median(trace_step_costs.step_times(data, steps, contextlib.nullcontext()))


def _load_bench_modules() -> None:
    if HERE not in sys.path:
        sys.path[:0] = [HERE, os.path.join(HERE, "scripts")]


def counted(mode: str, steps: int, step_seconds: float, folder: str) -> tuple:
    """(instructions in all, {function: instructions}) of one process running `steps`."""
    out = os.path.join(folder, f"{mode}.{steps}.out")
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                           sys.executable, os.path.abspath(__file__), "--child", mode, str(steps),
                           repr(step_seconds)],
                          capture_output=True, text=True, env=_environment(), cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{mode} {steps} steps failed:\n{done.stderr[-3000:]}")
    annotated = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                               capture_output=True, text=True, check=True).stdout
    return _totals(annotated)


def _environment() -> dict:
    """One BLAS thread; compiled modules written and read (a sandbox may turn that off); one
    string hash seed (a random one lays dictionaries out differently in each process, which
    moves a step's count by up to 0.1 M)."""
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                   "PYTHONPATH": ROOT, "PYTHONHASHSEED": "0"}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def _totals(annotated: str) -> tuple:
    total, functions = None, collections.Counter()
    for line in annotated.splitlines():
        found = re.match(r"\s*([\d,]+) (?:\([^)]*\) )?\s*(.*)", line)
        if not found:
            continue
        count, name = int(found.group(1).replace(",", "")), found.group(2)
        if "PROGRAM TOTALS" in name:
            total = count
            continue
        name = name.split(" [")[0].rsplit(":", 1)[-1].rstrip("'0123456789")
        functions[name] += count
    return total, functions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs=2, default=(10, 40), metavar=("FEW", "MANY"))
    parser.add_argument("--top", type=int, default=15, help="functions listed")
    parser.add_argument("--step-seconds", type=float, default=None,
                        help="a plain step's native seconds, for the watch's clock (default: "
                             "measured here first)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--native", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.native:  # (in a process of its own: one BLAS thread, as the counted runs)
        print(native_step_seconds())
        return
    if options.child:
        run_steps(options.child[0], int(options.child[1]), float(options.child[2]))
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        raise SystemExit("this benchmark counts instructions with Valgrind: apt-get install valgrind")
    few, many = options.steps
    for mode in MODES:  # compiled modules cached first: a run that compiled them would count it
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, "1", "0"],
                       check=True, env=_environment(), cwd=ROOT, capture_output=True)
    step_seconds = options.step_seconds or float(subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--native"], check=True, env=_environment(),
        cwd=ROOT, capture_output=True, text=True).stdout)
    with tempfile.TemporaryDirectory() as folder:
        keys = [(mode, steps) for mode in MODES for steps in (few, many)]
        with ThreadPoolExecutor(max_workers=min(len(keys), os.cpu_count() or 1)) as pool:
            runs = dict(zip(keys, pool.map(lambda key: counted(*key, step_seconds, folder), keys)))
    per_step = {mode: (runs[mode, many][0] - runs[mode, few][0]) / (many - few) for mode in MODES}
    fixed = {mode: runs[mode, few][0] - few * per_step[mode] for mode in MODES}
    print(f"train_classifier step, instructions counted by callgrind (one BLAS thread); "
          f"runs of {few} and {many} steps; the watch's clock at {step_seconds * 1e3:.1f} ms "
          f"a step (a plain step's native time)")
    print(f"  {'':<26} {'per step':>14} {'ratio':>7} {'fixed part':>16}")
    for mode in MODES:
        label = "genesis trace --no-check" if mode == "watched" else "plain"
        print(f"  {label:<26} {per_step[mode] / 1e6:11.2f} M  {per_step[mode] / per_step['plain']:6.3f}x"
              f" {fixed[mode] / 1e6:13.1f} M")
    print(f"\nwhere a watched step's extra instructions go (thousands per step; "
          f"{(per_step['watched'] - per_step['plain']) / 1e3:.0f} K in all):")
    growth = collections.Counter()
    for name in set().union(*(functions for _, functions in runs.values())):
        growth[name] = ((runs["watched", many][1][name] - runs["watched", few][1][name]) -
                        (runs["plain", many][1][name] - runs["plain", few][1][name])) / (many - few)
    for name, count in growth.most_common(options.top):
        print(f"  {count / 1e3:9.1f} K  {name[:90]}")


if __name__ == "__main__":
    main()
