"""Python's `multiprocessing` with tensors that can be shared between processes, as
`torch.multiprocessing`: importing it teaches the pickler of its Process arguments and
Queues to send a tensor whose memory is shared (`Tensor.share_memory_`, `Module.share_memory`)
as a reference to that memory, so the receiving process works on the same elements; any
other tensor is sent as a copy (PyTorch would move it into shared memory first). `spawn` and
`start_processes` run a function in several processes and report the first failure.

>>> import genesis
>>> import genesis.multiprocessing as mp
>>> queue = mp.SimpleQueue()
>>> weight = genesis.zeros(2).share_memory_()
>>> queue.put(weight); received = queue.get()
>>> _ = received.add_(1.0)
>>> weight
tensor([1., 1.])
"""
from __future__ import annotations

from multiprocessing import (Array, AuthenticationError, Barrier, BoundedSemaphore, BufferTooShort,
                             Condition, Event, JoinableQueue, Lock, Manager, Pipe, Pool, Process,
                             ProcessError, Queue, RawArray, RawValue, RLock, Semaphore, SimpleQueue,
                             TimeoutError, Value, active_children, allow_connection_pickling,
                             cpu_count, current_process, freeze_support, get_all_start_methods,
                             get_context, get_logger, get_start_method, log_to_stderr,
                             parent_process, reducer, set_executable, set_forkserver_preload,
                             set_start_method)

from .reductions import register_tensor_pickling
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessExitedException", "ProcessRaisedException",
           "Array", "AuthenticationError", "Barrier", "BoundedSemaphore", "BufferTooShort",
           "Condition", "Event", "JoinableQueue", "Lock", "Manager", "Pipe", "Pool", "Process",
           "ProcessError", "Queue", "RLock", "RawArray", "RawValue", "Semaphore", "SimpleQueue",
           "TimeoutError", "Value", "active_children", "allow_connection_pickling", "cpu_count",
           "current_process", "freeze_support", "get_all_start_methods", "get_context",
           "get_logger", "get_start_method", "log_to_stderr", "parent_process", "reducer",
           "set_executable", "set_forkserver_preload", "set_start_method"]

# PyTorch's names for how shared CPU memory is passed on; genesis always names a shared
# memory segment (like "file_system"), whichever is chosen
_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose one of `get_all_sharing_strategies()` (recorded; genesis shares the same way for
    both)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"sharing strategy must be one of {sorted(_STRATEGIES)}, "
                             f"got {new_strategy!r}")
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    """The strategy last set ("file_descriptor" at start, as PyTorch on Linux)."""
    return _strategy


def get_all_sharing_strategies() -> set:
    """{"file_descriptor", "file_system"}, as PyTorch on Linux."""
    return set(_STRATEGIES)


register_tensor_pickling()
