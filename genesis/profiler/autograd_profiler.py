"""`genesis.profiler.autograd_profiler.profile`: one recording from enter to exit, as
torch.autograd.profiler.profile (served under that name); torch.profiler.profile runs
one of these per active cycle of its schedule.

>>> import genesis
>>> x = genesis.ones(4, 4, requires_grad=True)
>>> with profile() as prof:
...     (x * 2).sum().backward()
>>> sorted({event.name for event in prof.function_events})
['MulBackward', 'SumBackward', 'genesis::mul', 'genesis::sum']
"""
from __future__ import annotations

import warnings

from ..utils.atomic_file import write_atomic
from .chrome_trace import write_chrome_trace
from .events import EventList, build_events
from .recorder import Recorder, record_function, recording

__all__ = ["profile", "record_function", "EventList"]


class profile:
    """Record the ops, backward nodes and `record_function` blocks run inside `with`:
    input shapes with `record_shapes`, allocated bytes with `profile_memory`, the Python
    stack with `with_stack`, GPU times with `use_cuda` / `use_device="cuda"` (on a CuPy
    GPU). `with_flops` and `with_modules` are accepted and record nothing more."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None, post_processing_timeout_s: float | None = None,
                 activity_filters=None):
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device not in (None, "cuda"):
            raise ValueError(f"use_device={use_device!r}: genesis profiles the CPU and CUDA only")
        self.enabled, self.use_device = enabled, use_device
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.function_events: EventList | None = None
        self.entered = False
        self._recorder: Recorder | None = None

    def __enter__(self) -> "profile":
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        recording.claim(self)
        self.start_recording()
        return self

    def __exit__(self, *exc_info) -> None:
        if not self.enabled:
            return
        self.stop_recording()
        recording.release(self)

    def start_recording(self) -> None:
        """Begin recording (without claiming the profiler: torch.profiler.profile has)."""
        self.entered = True
        self.function_events = None
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack,
                                  time_device=self.use_device == "cuda")
        self._recorder.attach()

    def stop_recording(self) -> None:
        """End recording and build the events (waiting for GPU times, if any)."""
        recorder = self._recorder
        recorder.detach()
        self.function_events = EventList(
            build_events(recorder.spans, recorder.origin_ns, _device_times(recorder.spans)),
            profile_memory=self.profile_memory, use_device=self.use_device,
            with_stack=self.with_stack)
        self.base_time_ns = recorder.origin_epoch_ns
        self._recorder = None

    def _check_finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        """Every recorded call, outer calls before inner ones."""
        return self._check_finished()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The calls grouped by name (and input shapes / innermost stack frames), added up."""
        return self._check_finished().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **options) -> str:
        return self._check_finished().table(sort_by=sort_by, row_limit=row_limit, **options)

    def total_average(self):
        return self._check_finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finished().self_cpu_time_total

    def export_chrome_trace(self, path, metadata: dict | None = None) -> None:
        """Write the recorded calls to `path` as a Chrome trace (see chrome_trace)."""
        write_chrome_trace(self._check_finished(), path, self.base_time_ns, metadata)

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Write one line per recorded call with a stack, `frame;frame;... value`
        (outermost frame first; value: `metric` in whole microseconds), the input of
        flamegraph.pl and speedscope. Needs `with_stack=True`."""
        if not self.with_stack:
            raise RuntimeError("export_stacks() needs the stacks: profile with with_stack=True")
        lines = []
        for event in self._check_finished():
            if event.stack:
                frames = ";".join([*reversed(event.stack), event.name])
                lines.append(f"{frames} {int(getattr(event, metric))}\n")
        write_atomic(path, lines)

    def __str__(self) -> str:
        return self.table() if self.function_events is not None else "<unfinished profile>"


def _device_times(spans: list) -> dict:
    """The GPU time (us) of each span timed with CUDA events, by id(span); waits for them."""
    times = {}
    for span in spans:
        if span.device_events is not None and span.device_events[1] is not None:
            import cupy

            start, end = span.device_events
            end.synchronize()
            times[id(span)] = cupy.cuda.get_elapsed_time(start, end) * 1000.0
            span.device_events = None
    return times
