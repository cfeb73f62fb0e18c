"""Running parts of one long array computation on several CPU threads at once.

NumPy lets go of Python's lock while an array call runs, so calls on separate slices of
one array, made from separate threads, run on separate cores. Handing the lock from
thread to thread costs some microseconds each time, so only work made of long calls
gains: a long elementwise formula (gelu's erf, some 25 array passes) over blocks of
128K elements, 1M elements or more in all, runs about 1.8x faster on two cores.

The number of threads is `genesis.set_num_threads`'s (the BLAS pools' count), by default
the CPUs this process may run on, or OMP_NUM_THREADS when set (as PyTorch counts them).
The helper threads are daemons started on first use; a forked child starts its own.

>>> import numpy as np
>>> out = np.empty(4)
>>> def fill(start, stop): out[start:stop] = np.arange(start, stop)
>>> run_parts([lambda: fill(0, 2), lambda: fill(2, 4)])
>>> out.tolist()
[0.0, 1.0, 2.0, 3.0]
"""
from __future__ import annotations

import os
import queue
import threading

__all__ = ["run_parts", "thread_count", "set_thread_count"]


def _default_count() -> int:
    """OMP_NUM_THREADS when it is a positive integer, else the CPUs this process may use."""
    try:
        asked = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        asked = 0
    if asked > 0:
        return asked
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


class _Workers:
    """Daemon threads that run the parts handed to them, started as many as needed."""

    def __init__(self):
        self.count = _default_count()  # threads in all, this one included
        self._parts: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list = []
        self._lock = threading.Lock()

    def start(self, wanted: int) -> None:
        with self._lock:
            while len(self._threads) < wanted:
                thread = threading.Thread(target=self._serve, daemon=True,
                                          name=f"genesis-cpu-{len(self._threads) + 1}")
                thread.start()
                self._threads.append(thread)

    def hand(self, part, finished: "_Finished") -> None:
        self._parts.put((part, finished))

    def _serve(self) -> None:
        while True:
            part, finished = self._parts.get()
            try:
                part()
            except BaseException as error:  # noqa: BLE001  re-raised in the caller's thread
                finished.failed(error)
            finally:
                finished.one_done()


class _Finished:
    """How many handed parts are still running, and the first error one raised."""

    def __init__(self, parts: int):
        self._left, self.error = parts, None
        self._done = threading.Condition(threading.Lock())

    def failed(self, error: BaseException) -> None:
        with self._done:
            if self.error is None:
                self.error = error

    def one_done(self) -> None:
        with self._done:
            self._left -= 1
            if self._left == 0:
                self._done.notify_all()

    def wait(self) -> None:
        with self._done:
            self._done.wait_for(lambda: self._left == 0)


_workers = _Workers()


def _forget_workers_after_fork() -> None:
    """A forked child has none of its parent's threads: it starts its own when needed."""
    global _workers
    count = _workers.count
    _workers = _Workers()
    _workers.count = count


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers_after_fork)


def thread_count() -> int:
    """How many threads `run_parts` uses at most (the calling one included)."""
    return _workers.count


def set_thread_count(count: int) -> None:
    """Use at most `count` threads from now on (`genesis.set_num_threads` calls this)."""
    _workers.count = count


def run_parts(parts: list) -> None:
    """Call each of `parts` (functions of no argument, each working on its own slice of the
    data), the first in this thread and the others on helper threads at once, and return
    when all are done; the first error one raised is raised here, after all have finished
    (none is left writing into an array the caller may free)."""
    if len(parts) <= 1:
        for part in parts:
            part()
        return
    workers = _workers
    workers.start(len(parts) - 1)
    finished = _Finished(len(parts) - 1)
    for part in parts[1:]:
        workers.hand(part, finished)
    try:
        parts[0]()
    finally:
        finished.wait()
    if finished.error is not None:
        raise finished.error
