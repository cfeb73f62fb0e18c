"""How `genesis.save` stores the data of tensors that share memory, and how `genesis.load`
gives it back shared.

Tensors that are windows on one storage (a tensor and its slices, a weight and its `.t()`)
are saved as one array, the span of the storage they cover, and for each tensor its window
on it: offset, shape and stride, in elements. Loading makes the span once and each tensor a
window on it, so, as with PyTorch, writing through one is seen through the others. A tensor
that shares with no other saved tensor keeps its own compact array (PyTorch would save its
whole storage; a slice of a large tensor saves only the slice here).

A window read from a file is checked to lie inside its span before any view is made: a
damaged or hostile manifest can't make a tensor that reads memory outside the file's data.

>>> import genesis
>>> x = genesis.arange(6.0)
>>> windows, span = shared_windows([x, x[2:4]])
>>> windows, span.tolist()
([(0, (6,), (1,)), (2, (2,), (1,))], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
>>> import numpy as np
>>> window_on(span, np, 2, (2,), (1,)).tolist()
[2.0, 3.0]
"""
from __future__ import annotations

from .ops.tensor_attributes import _address, _storage_root
from .tensor import Tensor

__all__ = ["sharing_key", "shared_windows", "window_on", "window_reach"]


def sharing_key(tensor: Tensor):
    """What tensors that share memory have in common (their storage and dtype), or None for a
    tensor whose data can't be described as a window on its storage in its own dtype (it
    holds no elements, or views the memory as another dtype, or the storage is not one
    contiguous block)."""
    data = tensor._data
    root = _storage_root(data)
    if data.size == 0 or root.dtype != data.dtype or not (
            root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    item = data.itemsize
    if (_address(data) - _address(root)) % item or any(step % item for step in data.strides):
        return None
    return id(root), tensor.dtype.name


def _window(data, root) -> tuple:
    """(offset, shape, stride) of `data` on `root`'s memory, in elements."""
    item = data.itemsize
    return ((_address(data) - _address(root)) // item, tuple(data.shape),
            tuple(step // item for step in data.strides))


def window_reach(offset: int, shape: tuple, stride: tuple) -> tuple:
    """The first element a window reads and one past its last (strides may be negative)."""
    low = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s < 0)
    high = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s > 0) + 1
    return low, high


def shared_windows(tensors: list) -> tuple:
    """For tensors with the same `sharing_key`: each one's window (offset, shape, stride) on the
    span of storage they cover together, and that span (a 1-D array on their device)."""
    root = _storage_root(tensors[0]._data)
    windows = [_window(tensor._data, root) for tensor in tensors]
    reaches = [window_reach(*window) for window in windows]
    low, high = min(start for start, _ in reaches), max(end for _, end in reaches)
    span = root.reshape(-1, order="A")[low:high]  # "A": memory order, a view for C or F order
    return [(offset - low, shape, stride) for offset, shape, stride in windows], span


def window_on(span, xp, offset: int, shape: tuple, stride: tuple):
    """The array that is the window (offset, shape, stride, in elements) on `span` (an array of
    `xp`, NumPy or CuPy), sharing its memory; the caller has checked that the window lies
    inside the span (`window_reach`)."""
    item = span.itemsize
    return xp.lib.stride_tricks.as_strided(span[offset:], shape, tuple(step * item for step in stride))
