"""Counting NaN and Inf in the values of an op call: `Census` (how many of each in an array
or a number), `all_finite` (the fast yes/no), and the words for an op call's arguments.
`genesis.autograd.nonfinite` judges what the counts mean.

>>> import genesis
>>> census = Census.of(genesis.tensor([1.0, float("nan"), float("inf")]))
>>> census.kinds(), census.counted(), census.finite
('NaN and Inf', '2 of 3 values', False)
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor

__all__ = ["Census", "all_finite", "flat_arguments", "input_shapes"]


class Census(NamedTuple):
    """How many of an array's `size` entries are NaN and how many are Inf."""

    size: int
    nan: int
    inf: int

    @classmethod
    def of(cls, tensor: Tensor) -> "Census":
        xp, data = tensor._device.xp, tensor._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            return cls(data.size, 0, 0)
        return cls(data.size, int(xp.isnan(data).sum()), int(xp.isinf(data).sum()))

    @classmethod
    def of_number(cls, value: float) -> "Census":
        return cls(1, int(math.isnan(value)), int(math.isinf(value)))

    @property
    def finite(self) -> bool:
        return not (self.nan or self.inf)

    def kinds(self) -> str:
        """ "NaN", "Inf" or "NaN and Inf": what the non-finite entries are."""
        return " and ".join(kind for kind, count in (("NaN", self.nan), ("Inf", self.inf)) if count)

    def counted(self) -> str:
        return f"{self.nan + self.inf} of {self.size} value{'s' if self.size != 1 else ''}"


def all_finite(tensor: Tensor) -> bool:
    """Whether every entry of `tensor` is finite (always, for a non-float one).

    On the CPU a float32/float64 array is first summed as the dot product with itself,
    one BLAS call: finite means every entry is; NaN or Inf (or squares past the dtype's
    range, 1e19 in float32) send it to the exact entry-by-entry test."""
    data = tensor._data
    if data.dtype not in FLOATING_NUMPY_DTYPES:
        return True
    if data.dtype in _DOT_DTYPES and type(data) is np.ndarray:
        flat = data.reshape(-1)
        if math.isfinite(flat.dot(flat)):
            return True
    return bool(tensor._device.xp.isfinite(data).all())


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def flat_arguments(args):
    """An op call's arguments, lists and tuples opened."""
    for arg in args:
        if isinstance(arg, (list, tuple)):
            yield from flat_arguments(arg)
        else:
            yield arg


def input_shapes(args) -> str:
    """The shapes and dtypes of an op call's tensor arguments, for a report."""
    return ", ".join(f"{tuple(arg.shape)} {arg.dtype.name}" for arg in args if isinstance(arg, Tensor))
