"""What a profiler hands back: `FunctionEvent` (one timed call, in its place in the tree of
calls), `FunctionEventAvg` (the calls of one key added up) and `EventList` (a list of
either, with `table`, `key_averages` and `total_average`), as torch.autograd.profiler_util's.

Times are in microseconds from the profiler's start. A call's self time is its time less
its children's (the calls that ran inside it on its thread); its memory
(`cpu_memory_usage`) is the bytes of new arrays it and its children returned, its self
memory (`self_cpu_memory_usage`) those it returned itself.

>>> from genesis.profiler.recorder import Span
>>> outer, inner = Span("step", "user_annotation", None, 1), Span("genesis::mul", "op", None, 1)
>>> outer.start_ns, outer.end_ns, inner.start_ns, inner.end_ns = 0, 10_000, 2_000, 5_000
>>> events = build_events([inner, outer], origin_ns=0)
>>> [(event.name, event.cpu_time_total, event.self_cpu_time_total) for event in events]
[('step', 10.0, 7.0), ('genesis::mul', 3.0, 3.0)]
"""
from __future__ import annotations

from typing import NamedTuple

from .chrome_trace import write_chrome_trace
from .table import build_table

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Interval", "build_events",
           "average_key"]


class Interval(NamedTuple):
    """A call's start and end, in microseconds from the profiler's start."""

    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


class _CudaNames:
    """PyTorch's older names for the device figures (`cuda_time_total` for
    `device_time_total`, ...), on events and their averages."""

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)


class FunctionEvent(_CudaNames):
    """One timed call: an op, a backward node or a `record_function` block.

    `device_time` is the GPU time measured around it (CUDA events), None where none was.
    """

    def __init__(self, id: int, name: str, kind: str, thread: int, start_us: float,
                 end_us: float, input_shapes: list, stack: list, allocated: int,
                 device_allocated: int, device_time: float | None, device_index: int | None):
        # PyTorch names every step "ProfilerStep*", so that key_averages adds the steps up;
        # the Chrome trace keeps each step's own "ProfilerStep#N" (`trace_name`)
        self.trace_name = name
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"
        self.id, self.name, self.kind, self.thread = id, name, kind, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes, self.stack = input_shapes, stack
        self.self_cpu_memory_usage, self.self_device_memory_usage = allocated, device_allocated
        self.device_time, self.device_index = device_time, device_index
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    key = property(lambda self: self.name)
    is_user_annotation = property(lambda self: self.kind == "user_annotation")
    cpu_time_total = property(lambda self: self.time_range.elapsed_us())
    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def device_memory_usage(self) -> int:
        return self.self_device_memory_usage + sum(child.device_memory_usage
                                                   for child in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        """Its own GPU time where measured, else its children's."""
        if self.device_time is not None:
            return self.device_time
        return sum(child.device_time_total for child in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if self.device_time is None:
            return 0.0
        return max(0.0, self.device_time - sum(child.device_time_total for child in self.cpu_children))


    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_CudaNames):
    """The calls of one key (a name; with the input shapes or stack when grouped by them)
    added up: totals, `count`, and averages (`cpu_time`, `device_time`)."""

    def __init__(self, key: str, input_shapes: list | None = None, stack: list | None = None):
        self.key, self.input_shapes, self.stack = key, input_shapes, stack
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.is_user_annotation = False

    def add(self, event) -> "FunctionEventAvg":
        """Add an event (or another average) into this one."""
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.device_time_total += event.device_time_total
        self.self_device_time_total += event.self_device_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.device_memory_usage += event.device_memory_usage
        self.self_device_memory_usage += event.self_device_memory_usage
        self.is_user_annotation = event.is_user_annotation
        if self.input_shapes is None:
            self.input_shapes = event.input_shapes
        if self.stack is None:
            self.stack = event.stack
        return self

    name = property(lambda self: self.key)
    cpu_time = property(lambda self: self.cpu_time_total / self.count if self.count else 0.0)
    self_cpu_time = property(lambda self: self.self_cpu_time_total / self.count if self.count else 0.0)
    device_time = property(lambda self: self.device_time_total / self.count if self.count else 0.0)
    cuda_time = device_time

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us self_cpu_memory_usage={self.self_cpu_memory_usage} "
                f"cpu_memory_usage={self.cpu_memory_usage} count={self.count} "
                f"input_shapes={self.input_shapes}>")


def average_key(event, group_by_input_shape: bool, group_by_stack_n: int) -> tuple:
    """What calls are grouped by: the name, and the input shapes and the innermost
    `group_by_stack_n` stack frames when asked."""
    key = [event.key]
    if group_by_input_shape:
        key.append(repr(event.input_shapes))
    if group_by_stack_n > 0:
        key.append(tuple(event.stack[:group_by_stack_n]))
    return tuple(key)


class EventList(list):
    """A list of `FunctionEvent`s (or of averages, from `key_averages`), with what the
    profiler that made it recorded: `profile_memory`, `use_device` ("cuda" when CUDA was
    asked for), whether shapes are a grouping key (`grouped_by_shapes`)."""

    def __init__(self, events=(), profile_memory: bool = False, use_device: str | None = None,
                 grouped_by_shapes: bool = False, with_stack: bool = False):
        super().__init__(events)
        self.profile_memory, self.use_device = profile_memory, use_device
        self.grouped_by_shapes, self.with_stack = grouped_by_shapes, with_stack

    def _like(self, events, **changes) -> "EventList":
        options = dict(profile_memory=self.profile_memory, use_device=self.use_device,
                       grouped_by_shapes=self.grouped_by_shapes, with_stack=self.with_stack)
        options.update(changes)
        return EventList(events, **options)

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the calls' self CPU times: the time the profiled code ran."""
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """One `FunctionEventAvg` per name (and input shapes, stack), in first-seen order."""
        averages = {}
        for event in self:
            key = average_key(event, group_by_input_shape, group_by_stack_n)
            if key not in averages:
                averages[key] = FunctionEventAvg(
                    event.key, event.input_shapes if group_by_input_shape else None,
                    event.stack if group_by_stack_n > 0 else None)
            averages[key].add(event)
        return self._like(averages.values(), grouped_by_shapes=group_by_input_shape,
                          with_stack=group_by_stack_n > 0)

    def total_average(self) -> FunctionEventAvg:
        """All calls added up into one average, keyed "Total"."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The rows as a table like PyTorch's (see genesis.profiler.table)."""
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path) -> None:
        """Write the events as a Chrome trace (see genesis.profiler.chrome_trace)."""
        write_chrome_trace(self, path)


def build_events(spans: list, origin_ns: int, device_times: dict | None = None) -> list:
    """The `FunctionEvent`s of finished spans, each linked to the calls that ran inside it
    on its thread, in start order (an outer call before its inner ones). `device_times`:
    GPU microseconds by span, where measured."""
    ordered = sorted(spans, key=lambda span: (span.thread, span.start_ns, -span.end_ns))
    events, open_by_thread = [], {}
    for number, span in enumerate(ordered):
        device_time = device_times.get(id(span)) if device_times else None
        event = FunctionEvent(number, span.name, span.kind, span.thread,
                              (span.start_ns - origin_ns) / 1000, (span.end_ns - origin_ns) / 1000,
                              span.input_shapes, span.stack, span.allocated,
                              span.device_allocated, device_time, span.device_index)
        stack = open_by_thread.setdefault(span.thread, [])
        while stack and stack[-1].time_range.end < event.time_range.end:  # ended before it did
            stack.pop()
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        events.append(event)
    return events
