"""`genesis.profiler.profile`, served as torch.profiler.profile: profiles a training loop
step by step, recording the steps its `schedule` marks active and handing each finished
cycle to `on_trace_ready`, with PyTorch's state machine (warnings included).

>>> import genesis
>>> from genesis.profiler import schedule
>>> cycles = []
>>> with profile(schedule=schedule(wait=1, warmup=1, active=2),
...              on_trace_ready=cycles.append) as prof:
...     for step in range(8):
...         y = genesis.ones(3) * step
...         prof.step()
>>> len(cycles), [row.key for row in prof.key_averages()]
(2, ['ProfilerStep*', 'genesis::mul'])
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Callable, Iterable

from .actions import ProfilerAction, ProfilerActivity, supported_activities
from .autograd_profiler import profile as recording_session
from .events import EventList
from .recorder import record_function, recording

__all__ = ["profile"]


def _record_always(step: int) -> ProfilerAction:
    """The schedule without one: every step records."""
    return ProfilerAction.RECORD


class profile:
    """Profile the code run between `start()` and `stop()` (or inside `with`), step by
    step (`step()` ends one): `schedule(step)` says what each step does (default: record
    all), `on_trace_ready(prof)` is called at the end of each cycle that recorded.

    `activities`: ProfilerActivity.CPU and/or CUDA (GPU times of ops on a CuPy GPU, with
    CUDA events); `record_shapes`, `profile_memory` (bytes of the new arrays each op
    returns), `with_stack` as in PyTorch. `with_flops`, `with_modules`,
    `experimental_config`, `execution_trace_observer` and `acc_events` are accepted and
    change nothing.
    """

    def __init__(self, *, activities: Iterable | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback=None, post_processing_timeout_s: float | None = None):
        chosen = set()
        for item in supported_activities() if activities is None else activities:
            chosen.update(item.keys() if isinstance(item, dict) else [item])
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            (chosen.add if use_cuda else chosen.discard)(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError("No valid profiler activities found")
        self.activities = chosen
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.schedule = schedule if schedule else _record_always
        self.record_steps = bool(schedule)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: record_function | None = None
        self.profiler: recording_session | None = None
        self.metadata: dict = {}

    # the transitions of PyTorch's profiler: (previous action, next action) -> what to do
    def _transit_action(self, previous: ProfilerAction, current: ProfilerAction | None) -> None:
        A = ProfilerAction
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)

        def warn(text):
            return lambda: warnings.warn(text, stacklevel=4)

        steps = {
            (A.NONE, A.WARMUP): [prepare], (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [warn("Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [warn("Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [warn("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop], (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }
        for action in steps.get((previous, current), []):
            action()

    def prepare_trace(self) -> None:
        self.profiler = recording_session(
            use_device="cuda" if ProfilerActivity.CUDA in self.activities else None,
            record_shapes=self.record_shapes, profile_memory=self.profile_memory,
            with_stack=self.with_stack, with_flops=self.with_flops, with_modules=self.with_modules)

    def start_trace(self) -> None:
        self.profiler.start_recording()

    def stop_trace(self) -> None:
        self.profiler.stop_recording()

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def start(self) -> None:
        """Begin profiling (the first step). RuntimeError while another profiler runs."""
        recording.claim(self)
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        """End profiling: a recording cycle still open is finished (and handed on)."""
        try:
            if self.record_steps and self.step_rec_fn:
                self.step_rec_fn.__exit__(None, None, None)
                self.step_rec_fn = None
            self._transit_action(self.current_action, None)
        finally:
            recording.release(self)

    def step(self) -> None:
        """Mark the end of a step (one training iteration): the next one begins."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(previous, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _session(self, what: str) -> recording_session:
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        return self.profiler

    def events(self) -> EventList:
        """The calls of the last recorded cycle (see FunctionEvent)."""
        return self._session("getting events").events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The last recorded cycle's calls grouped by name (and input shapes / innermost
        `group_by_stack_n` frames), added up; `.table(sort_by=..., row_limit=...)` shows them."""
        return self._session("getting key averages").key_averages(group_by_input_shape,
                                                                  group_by_stack_n)

    def export_chrome_trace(self, path) -> None:
        """Write the last recorded cycle as a Chrome trace (.gz: compressed)."""
        self._session("exporting a trace").export_chrome_trace(path, self.metadata or None)

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        self._session("exporting stacks").export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """A user-defined key/value pair written into the exported trace."""
        self.metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        self.metadata[key] = json.loads(value)
