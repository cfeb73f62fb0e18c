"""Writes into tensors whose elements share memory, PyTorch's rules.

A broadcast view (`expand`) has elements that are one memory location: its NumPy array is
read-only. A write into such a tensor as a whole (an in-place op, `copy_`, a slice of it
assigned to) is refused with PyTorch's error, since the elements would overwrite each other.
A part of it whose elements are all distinct (`t.expand(4, 3)[0]`, one element) may be
written, as in PyTorch: the write goes through to the memory the view shares with its base;
so may the whole of it by `fill_` and `zero_`, which put one value in every element.
"""
from __future__ import annotations

import numpy as np

__all__ = ["has_internal_overlap", "writable_alias", "assign_through", "OVERLAP_MESSAGE"]

OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers "
                   "to a single memory location. Please clone() the tensor before performing "
                   "the operation.")


def has_internal_overlap(array) -> bool:
    """Whether two elements of `array` are one memory location (a stride 0 along an extent
    above 1, as a broadcast view has).

    >>> has_internal_overlap(np.broadcast_to(np.zeros(1), (3,))), has_internal_overlap(np.zeros(3))
    (True, False)
    """
    return any(stride == 0 and extent > 1 for stride, extent in zip(array.strides, array.shape))


def writable_alias(array, what: str, one_value: bool = False):
    """A writeable NumPy array over the same memory as the read-only `array`, when its elements
    are distinct and the memory itself may be written (a part of a broadcast view), else None
    (memory NumPy holds read-only). One with overlapping elements is refused with PyTorch's
    RuntimeError, naming `what` (the write) and the shape and strides, unless the write puts
    `one_value` in every element (fill_, zero_: the elements can't disagree).

    >>> base = np.zeros(1)
    >>> alias = writable_alias(np.broadcast_to(base, (3,))[1:2], "fill_")
    >>> alias[0] = 5.0; base
    array([5.])
    >>> writable_alias(np.broadcast_to(base, (3,)), "add_")
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation. (add_ on a broadcast tensor of shape (3,), strides (0,) in elements: expand() shares one element among several places)
    """
    if not isinstance(array, np.ndarray) or array.flags.writeable:
        return None
    if not one_value and has_internal_overlap(array):
        strides = tuple(stride // array.itemsize for stride in array.strides)
        raise RuntimeError(f"{OVERLAP_MESSAGE} ({what} on a broadcast tensor of shape "
                           f"{tuple(array.shape)}, strides {strides} in elements: expand() "
                           "shares one element among several places)")
    owner = array.base
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    if not isinstance(owner, np.ndarray) or not owner.flags.writeable:
        return None
    alias = array.view()
    alias.flags.writeable = True
    return alias


def assign_through(array, key, value, advanced: bool) -> bool:
    """`array[key] = value` for a read-only `array`, where PyTorch allows it: `key` picks a part
    whose elements are distinct (a row of a broadcast view), or `array` itself has distinct
    elements and shares writeable memory. Returns False for memory NumPy holds read-only;
    refuses a part whose elements overlap with PyTorch's RuntimeError. `advanced`: `key`
    holds index arrays (its part is then not a view, so `array` itself must be distinct).

    >>> base = np.zeros((1, 2))
    >>> assign_through(np.broadcast_to(base, (3, 2)), (0,), 7.0, advanced=False), base
    (True, array([[7., 7.]]))
    """
    alias = writable_alias(array if advanced else array[key], "setitem")
    if alias is None:
        return False
    if advanced:
        alias[key] = value
    else:
        alias[...] = value
    return True
