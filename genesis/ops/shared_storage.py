"""Tensors in memory shared between processes (PyTorch's `share_memory_` and `is_shared`).

`share_memory_()` moves a CPU tensor's elements into a shared memory segment
(`multiprocessing.shared_memory`). A process started with fork sees the segment as it is;
one that receives the tensor through `genesis.multiprocessing` (the pickler of its Process
arguments and Queues) attaches to it. Either way both processes read and write the same
elements: an optimizer step in one is seen by the others, as Hogwild training needs.

The process that shared a tensor owns its segment and releases it when the tensor's memory
is no longer used there (at exit at the latest), so it must outlive the processes it sends
the tensor to, as a Hogwild parent waiting on its workers does. Views taken of a tensor
before it was shared keep the memory they had. CUDA tensors are left as they are (PyTorch's
`share_memory_` does nothing to them either).

>>> import genesis
>>> weight = genesis.zeros(3)
>>> weight.is_shared(), weight.share_memory_() is weight, weight.is_shared()
(False, True, True)
"""
from __future__ import annotations

import weakref
from multiprocessing import shared_memory

import numpy as np

from ..tensor import Tensor

__all__ = []  # Tensor methods (share_memory_, is_shared) and the helpers genesis.multiprocessing uses

# id(array) -> (weak reference to the array, its segment, the segment's start address), for
# every array laid directly on a segment's memory in this process
_on_segment: dict = {}
_attached: dict = {}  # segment name -> the SharedMemory this process attached to


def share_memory_(input: Tensor) -> Tensor:
    """Move the tensor's elements into memory shared between processes (in place; a tensor
    already there, or on a GPU, is left as it is). Returns the tensor.

    >>> import genesis
    >>> genesis.ones(2).share_memory_().is_shared()
    True
    """
    if input._device.type != "cpu" or is_shared(input):
        return input
    data = input._data
    segment = shared_memory.SharedMemory(create=True, size=max(data.nbytes, 1))
    shared = np.ndarray(data.shape, dtype=data.dtype, buffer=segment.buf)
    shared[...] = data
    _remember(shared, segment)
    weakref.finalize(shared, _release, segment)
    input._data = shared
    return input


def is_shared(input: Tensor) -> bool:
    """Whether the tensor's elements are in memory shared between processes (always True for
    a CUDA tensor, as PyTorch says).

    >>> import genesis
    >>> genesis.zeros(1).is_shared()
    False
    """
    return input._device.type == "cuda" or _segment_of(input._data) is not None


def shared_location(input: Tensor) -> tuple | None:
    """Where a shared CPU tensor's elements are: (segment name, byte offset, shape, byte
    strides, dtype string), what `attach` needs in another process; None if not shared."""
    found = _segment_of(input._data)
    if found is None:
        return None
    segment, start = found
    data = input._data
    return (segment.name, data.__array_interface__["data"][0] - start, data.shape, data.strides,
            data.dtype.str)


def attach(name: str, offset: int, shape: tuple, strides: tuple, dtype: str) -> np.ndarray:
    """The array another process shared (see `shared_location`), on the same memory."""
    segment = _attached.get(name)
    if segment is None:
        try:
            segment = shared_memory.SharedMemory(name=name)
        except FileNotFoundError:
            raise RuntimeError(f"the shared memory {name!r} of a tensor received from another "
                               "process is gone: the process that shared it released it "
                               "(it exited, or no longer holds the tensor)") from None
        _attached[name] = segment
    array = np.ndarray(shape, dtype=np.dtype(dtype), buffer=segment.buf, offset=offset,
                       strides=strides)
    _remember(array, segment)
    return array


def _remember(array: np.ndarray, segment) -> None:
    key = id(array)
    start = np.frombuffer(segment.buf, dtype=np.uint8).__array_interface__["data"][0]
    _on_segment[key] = (weakref.ref(array, lambda _, key=key: _on_segment.pop(key, None)),
                        segment, start)


def _segment_of(data: np.ndarray):
    """(segment, its start address) for an array on a segment's memory, else None."""
    while True:
        entry = _on_segment.get(id(data))
        if entry is not None and entry[0]() is data:
            return entry[1], entry[2]
        base = data.base
        if not isinstance(base, np.ndarray):
            return None
        data = base


def _release(segment) -> None:
    """The creating process no longer uses the segment: unmap it and remove its name."""
    try:
        segment.close()
    except BufferError:  # an array this process still holds was laid on it by `attach`
        pass
    try:
        segment.unlink()
    except FileNotFoundError:
        pass


METHODS = {"share_memory_": share_memory_, "is_shared": is_shared}
OPS: list = []
