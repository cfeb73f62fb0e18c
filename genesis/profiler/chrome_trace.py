"""Profiler events as a Chrome trace (the JSON that chrome://tracing, Perfetto and
TensorBoard's profiler plugin read): one complete event ("ph": "X") per call, with its
start (`ts`) and duration (`dur`) in microseconds from the profiler's start, its thread,
and in `args` its input shapes, memory and GPU time where recorded. Files are written
atomically: a reader sees the previous file or the whole new one.

>>> from genesis.profiler.events import build_events
>>> from genesis.profiler.recorder import Span
>>> span = Span("genesis::mul", "op", None, 7)
>>> span.start_ns, span.end_ns = 1_000, 4_500
>>> trace = chrome_trace(build_events([span], origin_ns=0))
>>> {key: trace["traceEvents"][-1][key] for key in ("name", "ph", "ts", "dur", "tid")}
{'name': 'genesis::mul', 'ph': 'X', 'ts': 1.0, 'dur': 3.5, 'tid': 7}
"""
from __future__ import annotations

import gzip
import json
import os
import time

from ..utils.atomic_file import write_atomic

__all__ = ["chrome_trace", "write_chrome_trace", "tensorboard_trace_handler"]

_CATEGORY = {"op": "cpu_op", "backward": "cpu_op", "user_annotation": "user_annotation"}


def chrome_trace(events, base_time_ns: int = 0, metadata: dict | None = None) -> dict:
    """The Chrome trace of `events` (FunctionEvents); `base_time_ns`: the wall-clock time
    (ns since the epoch) of the profiler's start, which the `ts` values count from."""
    pid = os.getpid()
    trace_events = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"name": "genesis"}}]
    trace_events += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": thread,
                      "args": {"name": f"thread {thread}"}}
                     for thread in sorted({event.thread for event in events})]
    for event in events:
        args = {"External id": event.id}
        if event.input_shapes:
            args["Input Dims"] = event.input_shapes
        if event.self_cpu_memory_usage or event.self_device_memory_usage:
            args["Allocated bytes"] = event.self_cpu_memory_usage + event.self_device_memory_usage
        if event.device_time is not None:
            args["device"] = event.device_index
            args["Device time (us)"] = round(event.device_time, 3)
        if event.stack:
            args["Call stack"] = ";".join(event.stack)
        trace_events.append({
            "ph": "X", "cat": _CATEGORY[event.kind], "name": event.trace_name, "pid": pid,
            "tid": event.thread, "ts": round(event.time_range.start, 3),
            "dur": round(event.time_range.elapsed_us(), 3), "args": args})
    trace = {"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": base_time_ns,
             "traceEvents": trace_events}
    if metadata:
        trace.update(metadata)
    return trace


def write_chrome_trace(events, path, base_time_ns: int = 0, metadata: dict | None = None) -> None:
    """Write the Chrome trace of `events` to `path` atomically (gzip-compressed when the
    name ends in .gz)."""
    text = json.dumps(chrome_trace(events, base_time_ns, metadata))
    path = os.fspath(path)
    write_atomic(path, gzip.compress(text.encode()) if path.endswith(".gz") else text)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An `on_trace_ready` that writes each trace into `dir_name` (made if missing) as
    `<worker_name>.<time in ns>.pt.trace.json` (`.gz` with `use_gzip`), where TensorBoard's
    profiler plugin finds it; `worker_name` is `<host>_<pid>` by default.

    >>> import genesis, tempfile, os
    >>> from genesis.profiler import profile
    >>> folder = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(folder, "worker0")):
    ...     y = genesis.ones(2) * 2
    >>> [name.split(".")[0] for name in os.listdir(folder)]
    ['worker0']
    """

    def write_trace(prof) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as error:
            raise RuntimeError(f"Can't create directory: {dir_name}") from error
        if not worker_name:
            import socket  # only here: the rest of genesis never needs it

            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return write_trace
