"""Undoing broadcasting: a gradient computed in a broadcast shape summed back to its
input's shape. The engine does it for every op, so no op's backward needs to."""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["sum_to_shape", "broadcast_axes"]


def sum_to_shape(grad: Tensor, shape: tuple) -> Tensor:
    """Sum `grad` over the dimensions that broadcasting added or stretched, to get `shape`.

    >>> import genesis
    >>> sum_to_shape(genesis.ones(2, 3), (1, 3))
    tensor([[2., 2., 2.]])
    """
    shape = tuple(shape)
    grad_shape = grad.shape
    if grad_shape == shape:
        return grad
    lead, stretched = broadcast_axes(grad_shape, shape)
    if stretched or lead:
        # Only leading dims: summed away outright, so the result is a fresh array that the
        # engine can hand over as a leaf's .grad without copying (a reshaped view it can't).
        grad = grad.sum(dim=lead + stretched, keepdim=bool(stretched))
    if grad.shape != shape:
        grad = grad.reshape(shape)
    return grad


def broadcast_axes(grad_shape: tuple, shape: tuple) -> tuple:
    """The axes of `grad_shape` that broadcasting `shape` to it added (leading) and
    stretched (from 1), as two tuples: the axes a gradient is summed over.

    >>> broadcast_axes((4, 2, 3), (1, 3))
    ((0,), (1,))
    """
    lead = len(grad_shape) - len(shape)
    stretched = tuple(lead + index for index, extent in enumerate(shape)
                      if extent == 1 and grad_shape[lead + index] != 1)
    return tuple(range(lead)), stretched
