"""DataLoader worker processes: each loads the batches it is sent (map-style datasets) or
iterates its own copy of the dataset (iterable ones), and sends the results back.

`get_worker_info()` tells code running in a worker which worker it is.
"""
from __future__ import annotations

import os
import queue
import random
import traceback
from dataclasses import dataclass

import numpy as np

from ...random import manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "WorkerError"]


@dataclass(frozen=True)
class WorkerInfo:
    """Which worker this is (`id` in 0 .. num_workers - 1), its seed and its dataset copy."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None
PARENT_CHECK_S = 5.0  # how often a worker waiting for a task checks that its parent lives


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its `WorkerInfo`; None in the main process.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class WorkerError:
    """An exception raised in a worker, carried back (with its traceback as text) to be
    raised again in the main process."""

    def __init__(self, worker_id: int, error: BaseException):
        self.worker_id = worker_id
        self.kind = type(error)
        self.text = "".join(traceback.format_exception(type(error), error, error.__traceback__))

    def reraise(self):
        message = (f"Caught {self.kind.__name__} in DataLoader worker process {self.worker_id}.\n"
                   f"Original {self.text}")
        try:
            error = self.kind(message)
        except Exception:  # an exception type that does not take one message
            error = RuntimeError(message)
        raise error


class StreamEnd:
    """What stands for "no more batches" from an iterable dataset's stream (a class, so it
    is recognised after crossing processes, where an object's identity is lost)."""


_DONE = StreamEnd()


def worker_loop(dataset, fetch, tasks, results, worker_id: int, num_workers: int, base_seed: int,
                init_fn, iterable: bool) -> None:
    """A worker process's body. It also ends when the process that started it is gone (killed
    by SIGTERM or SIGKILL, which leave it no time to stop its workers), as PyTorch's workers
    do: it would otherwise wait for a task forever."""
    parent = os.getppid()
    try:
        _work(dataset, fetch, tasks, results, worker_id, num_workers, base_seed, init_fn, iterable,
              parent)
    finally:  # what was sent reaches the pipe before this process ends (if anyone reads it)
        results.close()
        if os.getppid() != parent:
            results.cancel_join_thread()
        results.join_thread()


def _work(dataset, fetch, tasks, results, worker_id: int, num_workers: int, base_seed: int,
          init_fn, iterable: bool, parent: int) -> None:
    """The body of worker `worker_id`: seeded from `base_seed` (see `seed_worker`),
    `init_fn(worker_id)` first; then, for a map-style dataset, `fetch(indices)` for each
    (number, indices) task until None; for an iterable one, every batch of its own
    iteration (`fetch(iterator)`) as (number, batch), then `_DONE`. Either stops early once
    this process's parent is no longer `parent`."""
    global _worker_info
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
        if iterable:
            iterator = iter(dataset)
            number = 0
            while True:
                batch = fetch(iterator)
                if isinstance(batch, StreamEnd):
                    break
                results.put((number, batch))
                number += 1
                if _stopped(tasks) or os.getppid() != parent:
                    return
            results.put((number, _DONE))
            return
        while True:
            try:
                task = tasks.get(timeout=PARENT_CHECK_S)
            except queue.Empty:
                if os.getppid() != parent:
                    return
                continue
            if task is None:
                return
            number, indices = task
            try:
                results.put((number, fetch(indices)))
            except Exception as error:  # sent back, raised in the main process
                results.put((number, WorkerError(worker_id, error)))
    except Exception as error:
        results.put((-1, WorkerError(worker_id, error)))


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed this process's random number generators for worker `worker_id`, as PyTorch's
    workers are seeded: genesis's and Python's `random` with `base_seed + worker_id` (the
    seed returned, `get_worker_info().seed`), NumPy's global one with four words that
    NumPy's SeedSequence hashes from the worker id and the base seed, so workers' NumPy
    draws differ (and match PyTorch's for the same base seed)."""
    seed = base_seed + worker_id
    manual_seed(seed)
    random.seed(seed)
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    np.random.seed(np.random.SeedSequence(words).generate_state(4))
    return seed


def _stopped(tasks) -> bool:
    """Whether the main process asked this (iterable) worker to stop."""
    try:
        return tasks.get_nowait() is None
    except queue.Empty:
        return False
