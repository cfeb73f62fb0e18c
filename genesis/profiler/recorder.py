"""The recorder behind the profilers: while attached, it listens to genesis's hook points
and keeps one `Span` (name, thread, start and end time, what it allocated) per op call,
backward node and `record_function` block; detached, genesis's hook sets are empty again,
so nothing is paid while no profiler records.

Hook points (see genesis.autograd.function, genesis.autograd.engine, genesis.optim):
`function.start_observers` and `function.observers` (an op's start and end, backward's
ops included), `engine.node_start_observers` and `engine.node_checkers` (a node's
backward), `optimizer.listeners` (an optimizer's update, as PyTorch's
"Optimizer.step#SGD.step" row). The recorder is told of a call's end before the other
listeners, so their work is not timed as the call's.

>>> import genesis
>>> recorder = Recorder(record_shapes=True)
>>> recorder.attach()
>>> with record_function("scale"):
...     y = genesis.ones(2, 3) * 2
>>> recorder.detach()
>>> [(span.name, span.input_shapes) for span in recorder.spans]
[('genesis::mul', [[2, 3], []]), ('scale', [])]
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time

import numpy as np

from ..autograd import engine, function
from ..autograd.function import _op_name
from ..optim import optimizer as optimizer_module
from ..tensor import Tensor

__all__ = ["Recorder", "Span", "record_function", "recording"]

_GENESIS_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Span:
    """One timed call: an op ("op"), a node's backward ("backward") or a `record_function`
    block ("user_annotation"), on one thread, from `start_ns` to `end_ns`
    (time.perf_counter_ns). `allocated`/`device_allocated`: bytes of the new arrays it
    returned (host / GPU). `device_events`: the CUDA events recorded around it on a GPU."""

    __slots__ = ("name", "kind", "key", "thread", "start_ns", "end_ns", "input_shapes", "stack",
                 "allocated", "device_allocated", "device_events", "device_index", "child_outputs")

    def __init__(self, name: str, kind: str, key, thread: int):
        self.name, self.kind, self.key, self.thread = name, kind, key, thread
        self.start_ns = self.end_ns = 0
        self.input_shapes, self.stack = [], []
        self.allocated = self.device_allocated = 0
        self.device_events = None
        self.device_index = None
        self.child_outputs = None  # ids of arrays its inner ops returned (counted there)


class _Recording:
    """The recorder attached now (None: none is) and the profiler started now (the one
    whose start claimed genesis's hooks; genesis runs one profiler at a time)."""

    def __init__(self):
        self.recorder = None
        self.owner = None

    def claim(self, owner) -> None:
        """Make `owner` the running profiler; RuntimeError if another one runs."""
        if self.owner is not None and self.owner is not owner:
            raise RuntimeError(
                "Profiler is already enabled: a profiler was started while another one runs "
                f"({type(self.owner).__module__}.{type(self.owner).__qualname__}); genesis "
                "profiles with one at a time, so stop the first before starting another")
        self.owner = owner

    def release(self, owner) -> None:
        if self.owner is owner:
            self.owner = None


recording = _Recording()


class _OpenSpans(threading.local):
    """The spans begun and not yet ended on this thread, innermost last."""

    def __init__(self):
        self.spans = []


class Recorder:
    """Keeps a `Span` for each op, backward node and `record_function` block run while it
    is attached: input shapes with `record_shapes`, allocated bytes with `profile_memory`,
    the Python stack (outside genesis) with `with_stack`, and the GPU time of ops on a
    CuPy GPU with `time_device` (nothing on the CPU or a fake GPU).

    A GPU time is the time between two CUDA events recorded on the current stream before
    and after the op, as PyTorch's legacy `use_cuda` profiler measured it: the op's
    kernels, plus any wait for the CPU to launch them while the GPU had nothing queued."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, time_device: bool = False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.time_device = with_stack, time_device
        self.spans: list[Span] = []
        self._open = _OpenSpans()
        self._names = {}
        self._op_starts = _OpStarts(self)
        self._op_ends = _OpEnds(self)
        self._node_starts = _NodeStarts(self)
        self._node_ends = _NodeEnds(self)
        self._optimizer_steps = _OptimizerSteps(self)
        self.origin_ns = self.origin_epoch_ns = 0

    def attach(self) -> None:
        """Start recording: join genesis's hook points."""
        self.origin_ns, self.origin_epoch_ns = time.perf_counter_ns(), time.time_ns()
        function.start_observers.add(self._op_starts)
        function.observers.add_first(self._op_ends)
        engine.node_start_observers.add(self._node_starts)
        engine.node_checkers.add_first(self._node_ends)
        optimizer_module.listeners.add(self._optimizer_steps)
        recording.recorder = self

    def detach(self) -> None:
        """Stop recording: leave the hook points; spans still open are dropped."""
        function.start_observers.discard(self._op_starts)
        function.observers.discard(self._op_ends)
        engine.node_start_observers.discard(self._node_starts)
        engine.node_checkers.discard(self._node_ends)
        optimizer_module.listeners.discard(self._optimizer_steps)
        if recording.recorder is self:
            recording.recorder = None
        self._open = _OpenSpans()

    def begin(self, key, name: str, kind: str, args: tuple = (), device=None) -> None:
        """Open a span for `key` (the op's class, the node, the record_function)."""
        span = Span(name, kind, key, threading.get_native_id())
        if self.record_shapes:
            span.input_shapes = [_shape_of(arg) for arg in args]
        if self.with_stack:
            span.stack = python_stack()
        if self.time_device and device is not None and device.type != "cpu" and device.xp is not np:
            span.device_index = device.index or 0
            span.device_events = (_cuda_event(), None)
        self._open.spans.append(span)
        span.start_ns = time.perf_counter_ns()  # last: the profiler's own work is not timed

    def end(self, key, outputs: tuple = (), inputs: tuple = ()) -> None:
        """Close the innermost open span of `key`; spans opened inside it and left open (an
        op that raised) are dropped. `outputs`: what it returned, for `profile_memory`."""
        end_ns = time.perf_counter_ns()
        spans = self._open.spans
        for index in range(len(spans) - 1, -1, -1):
            if spans[index].key is key:
                break
        else:
            return
        span = spans[index]
        del spans[index:]
        span.end_ns = end_ns
        if span.device_events is not None:
            span.device_events = (span.device_events[0], _cuda_event())
        if self.profile_memory and outputs:
            self._count_allocated(span, outputs, inputs, spans[-1] if spans else None)
        span.key = None
        self.spans.append(span)

    def _count_allocated(self, span: Span, outputs: tuple, inputs: tuple, parent) -> None:
        """Bytes of the arrays `span` returned that are new: not an input, not returned by an
        op inside it (counted there). A view op's outputs are not passed here."""
        taken = {id(arg._data) for arg in inputs if isinstance(arg, Tensor)}
        counted = span.child_outputs or ()
        for output in outputs:
            if not isinstance(output, Tensor):
                continue
            data = output._data
            if id(data) not in taken and id(data) not in counted:
                if output._device.type == "cpu":
                    span.allocated += data.nbytes
                else:
                    span.device_allocated += data.nbytes
            if parent is not None and parent.kind != "user_annotation":  # (a block returns nothing)
                if parent.child_outputs is None:
                    parent.child_outputs = set()
                parent.child_outputs.add(id(data))

    def op_name(self, cls) -> str:
        """The row name of an op: `genesis::<op name>` for genesis's ops (as PyTorch's
        `aten::mul`), the class name for a user's Function."""
        name = self._names.get(cls)
        if name is None:
            name = self._names[cls] = f"genesis::{_op_name(cls)}" if cls._builtin else cls.__name__
        return name


class _OpStarts:
    """The recorder's OpStartObserver."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def __call__(self, cls, args: tuple) -> None:
        recorder = self.recorder
        recorder.begin(cls, recorder.op_name(cls), "op", args, _device_of(args))


class _OpEnds:
    """The recorder's OpObserver: sees the ops backward runs, and views of data."""

    sees_backward = True

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def __call__(self, node, args: tuple, outputs: tuple) -> None:
        cls = node._forward_cls
        self.recorder.end(cls, () if cls.is_view else outputs, args)


class _NodeStarts:
    """The recorder's NodeStartObserver: a node's backward is a span named as the node."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def __call__(self, node) -> None:
        device = next((meta[2] for meta in node._input_meta if meta is not None), None)
        self.recorder.begin(node, type(node).__name__, "backward", (), device)


class _NodeEnds:
    """The recorder's NodeChecker: ends the node's span; it keeps no gradient."""

    keeps_gradients = False

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def __call__(self, node, grad_outputs: list, grad_inputs: tuple, flowed_from: dict) -> None:
        self.recorder.end(node, tuple(grad_inputs), tuple(grad_outputs))


class _OptimizerSteps:
    """The recorder's OptimizerListener: an optimizer's update of its parameters is a row
    named as PyTorch names it, `Optimizer.step#<class>.step`."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def params_added(self, optimizer, params: list) -> None:
        pass

    def stepping(self, optimizer) -> None:
        self.recorder.begin(optimizer, f"Optimizer.step#{type(optimizer).__name__}.step",
                            "user_annotation")

    def stepped(self, optimizer) -> None:
        self.recorder.end(optimizer)


def _device_of(args: tuple):
    for arg in args:
        if isinstance(arg, Tensor):
            return arg._device
    return None


def _shape_of(value) -> list:
    """An argument's shape as PyTorch's profiler lists it: a tensor's dims, a list per
    tensor of a sequence of tensors, [] for anything else."""
    if isinstance(value, Tensor):
        return list(value._data.shape)
    if isinstance(value, list | tuple) and value and all(isinstance(item, Tensor) for item in value):
        return [list(item._data.shape) for item in value]
    return []


def python_stack() -> list:
    """The calling Python frames outside genesis, innermost first, as `file(line): function`."""
    frame, stack = sys._getframe(1), []
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_GENESIS_FOLDER):
            stack.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return stack


def _cuda_event():
    """A CUDA event recorded now on the current stream (only reached on a CuPy GPU)."""
    import cupy

    event = cupy.cuda.Event()
    event.record()
    return event


class record_function:
    """Time a block (or each call of a function) as one row named `name`, around the ops it
    runs; blocks nest. Outside a running profiler it records nothing.

    >>> import genesis
    >>> with record_function("forward"):
    ...     y = genesis.ones(2) + 1
    >>> @record_function("loss")
    ... def loss(x):
    ...     return (x * x).sum()
    >>> loss(genesis.ones(3)).item()
    3.0
    """

    def __init__(self, name: str, args: str | None = None):
        self.name, self.args = name, args
        self._recorders = []  # the recorder each unfinished entry began a span in (or None)

    def __enter__(self) -> "record_function":
        recorder = recording.recorder
        if recorder is not None:
            recorder.begin(self, self.name, "user_annotation")
        self._recorders.append(recorder)
        return self

    def __exit__(self, *exc_info) -> None:
        recorder = self._recorders.pop() if self._recorders else None
        if recorder is not None:
            recorder.end(self)

    def __call__(self, fn):
        """As a decorator: each call of `fn` is a block of its own."""

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return timed
