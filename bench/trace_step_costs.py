"""What one training step costs under `genesis trace --no-check`, in one process: the steps
after the recorded one (the steady state of a long run) timed plain and watched, in
interleaved blocks so that the machine's drift hits both alike, then where the watched
step's extra time goes, hook by hook.

`trace_overhead.py` times whole runs in fresh processes, which also counts start-up, the
report's files and the exit; on a noisy machine its spread is wider than the per-step
cost. This one isolates the per-step cost, the part that grows with the run.

The step is bench/scripts/train_classifier.py's (784-256-128-10 MLP, DataLoader of 64,
AdamW). The watched blocks run under what `genesis trace --no-check` sets up in the
script's process: a TraceSession without re-checks, its journal and metrics.jsonl.

Hook times come from a separate watched run whose hooks (function observers, node
checkers, backward, optimizer, scheduler and module listeners, loss roots) are each
wrapped in a timer: a hook's own time, including what it calls; the wrappers add about
0.2 us per call, and the work a watch causes inside genesis outside its hooks is in the
first table only.

Run: python bench/trace_step_costs.py [--rounds 10] [--steps 40]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts"))

import genesis  # noqa: E402
import genesis.nn.functional as F  # noqa: E402
from genesis import amp  # noqa: E402
from genesis.autograd import engine, function, module_scope  # noqa: E402
from genesis.autograd.tensor_methods import backward_roots  # noqa: E402
from genesis.debug.journal import Journal  # noqa: E402
from genesis.debug.session import TraceSession  # noqa: E402
from genesis.optim import optimizer as optimizers  # noqa: E402
from genesis.optim.lr_scheduler import base as schedulers  # noqa: E402
from genesis.utils.data import DataLoader, TensorDataset  # noqa: E402
from genesis_cli.metrics_sinks import MetricsSinks  # noqa: E402
from train_classifier import Classifier  # noqa: E402

WARM_UP = 5  # steps of each block not timed: the recorded step and the first few after it
HOOK_POINTS = {"observer": function.observers, "node checker": engine.node_checkers,
               "backward": engine.backward_listeners, "optimizer": optimizers.listeners,
               "scheduler": schedulers.listeners, "module": module_scope.listeners,
               "loss root": backward_roots, "amp": amp.listeners}


@contextlib.contextmanager
def watched(folder: str):
    """What `genesis trace --no-check` sets up in the script's process."""
    session = TraceSession(steps=1, check=False, journal=Journal(os.path.join(folder, "journal"),
                                                                  {"script": "bench"}))
    with MetricsSinks(os.path.join(folder, "metrics.jsonl"), None) as sinks, session:
        sinks.attach(session)
        yield session


def step_times(data, steps: int, setting, on_step=None, each_step=None) -> list:
    """Seconds of each step after WARM_UP, for a fresh model trained under `setting`;
    `on_step()` is called before step WARM_UP, `each_step()` before every step."""
    times = []
    with setting:
        loader = _batches(data)
        model = Classifier()
        optimizer = genesis.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
        for step in range(steps):
            if step == WARM_UP and on_step is not None:
                on_step()
            if each_step is not None:
                each_step()
            started = time.perf_counter()
            batch, target = next(loader)
            optimizer.zero_grad()
            F.cross_entropy(model(batch), target).backward()
            optimizer.step()
            if step >= WARM_UP:
                times.append(time.perf_counter() - started)
    return times


def _batches(data):
    """Shuffled batches of 64, epoch after epoch."""
    while True:
        yield from DataLoader(data, batch_size=64, shuffle=True)


class _Timed:
    """A hook that times its calls into `spent` under `label` (methods too: a listener)."""

    def __init__(self, inner, label: str, spent: Counter, calls: Counter):
        self._inner, self._label, self._spent, self._calls = inner, label, spent, calls

    def __call__(self, *args, **kwargs):
        return self._timed(self._inner, self._label, args, kwargs)

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._timed(attribute, f"{self._label}.{name}", args, kwargs)

    def __eq__(self, other):  # a watch removing itself at the end finds its wrapper
        return other is self or other is self._inner

    __hash__ = object.__hash__

    def _timed(self, call, label: str, args, kwargs):
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self._spent[label] += time.perf_counter() - started
            self._calls[label] += 1


def hook_costs(data, steps: int) -> tuple:
    """({hook: seconds}, {hook: calls}, steps timed) of one watched run."""
    spent, calls = Counter(), Counter()

    def wrap_hooks() -> None:
        spent.clear()
        calls.clear()
        for point, hooks in HOOK_POINTS.items():
            for index, hook in enumerate(hooks):
                if not isinstance(hook, _Timed):
                    name = getattr(hook, "__qualname__", type(hook).__name__)
                    hooks[index] = _Timed(hook, f"{point}: {name}", spent, calls)

    with tempfile.TemporaryDirectory() as folder:
        times = step_times(data, steps, watched(folder), on_step=wrap_hooks)
    return spent, calls, len(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="plain and watched blocks each")
    parser.add_argument("--steps", type=int, default=40, help="steps per block")
    options = parser.parse_args()
    genesis.manual_seed(0)
    data = TensorDataset(genesis.randn(4096, 1, 28, 28), genesis.randint(0, 10, (4096,)))
    plain, watched_times = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(options.rounds):
            plain += step_times(data, options.steps, contextlib.nullcontext())
            watched_times += step_times(data, options.steps, watched(folder))
    reference, under_trace = statistics.median(plain), statistics.median(watched_times)
    print(f"train_classifier step, median of {len(plain)} steps each "
          f"({options.rounds} interleaved blocks of {options.steps - WARM_UP})")
    print(f"  plain                      {reference * 1e6:8.0f} us   1.00x")
    print(f"  genesis trace --no-check   {under_trace * 1e6:8.0f} us   {under_trace / reference:.2f}x")
    spent, calls, steps = hook_costs(data, options.steps * 4)
    print(f"\nwhere the watched step's time goes (one run, {steps} steps; us per step):")
    for label, seconds in spent.most_common():
        print(f"  {seconds / steps * 1e6:8.1f} us  {calls[label] / steps:6.1f} calls  {label}")
    print(f"  {sum(spent.values()) / steps * 1e6:8.1f} us  in all, against "
          f"{(under_trace - reference) * 1e6:.0f} us more per step above")


if __name__ == "__main__":
    main()
