"""Turning op arguments into arrays: unwrapping, PyTorch dtype promotion, device checks."""
from __future__ import annotations

import numbers

import numpy as np

from ..dtypes import from_numpy_dtype, promote_types
from ..tensor import Tensor

_FLOAT32 = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)


def operands(a, b, op: str = "op"):
    """Arrays (or Python numbers) of `a` and `b`, cast to PyTorch's result dtype.

    >>> import genesis
    >>> x, y = operands(genesis.tensor([1, 2]), 0.5)
    >>> x.dtype, y
    (dtype('float32'), 0.5)
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._device is not b._device:
                raise RuntimeError(device_mismatch(op, a, b))
            x, y = a._data, b._data
            if x.dtype == y.dtype:
                return x, y
            return _promote_arrays(x, y)
        return _with_scalar(a._data, b, op)
    if isinstance(b, Tensor):
        y, x = _with_scalar(b._data, a, op)
        return x, y
    raise TypeError(f"{op}: expected at least one Tensor operand, got "
                    f"{type(a).__name__} and {type(b).__name__}")


def device_mismatch(op: str, a: Tensor, b: Tensor) -> str:
    return (f"{op}: expected all tensors on the same device, but found one on {a.device} and "
            f"one on {b.device}; move one with .to(device)")


def _with_scalar(array, scalar, op: str):
    kind = array.dtype.kind
    scalar_type = scalar.__class__
    if scalar_type is float:
        if kind in "iub":
            array = array.astype(_FLOAT32)
        return array, scalar
    if scalar_type is int:
        if kind == "b":
            array = array.astype(_INT64)
        return array, scalar
    if scalar_type is bool:
        return array, scalar
    if isinstance(scalar, np.generic | np.ndarray) and np.ndim(scalar) == 0:
        return _with_scalar(array, scalar.item(), op)
    if isinstance(scalar, numbers.Real):
        return _with_scalar(array, float(scalar) if isinstance(scalar, float) else int(scalar), op)
    raise TypeError(f"{op}: unsupported operand of type {type(scalar).__name__}; expected a "
                    "Tensor or a Python number")


def _promote_arrays(x, y):
    """Cast two arrays of different dtypes to their PyTorch result dtype.

    A 0-d operand does not widen a dimensioned one of the same category
    (float32 tensor * float64 0-d tensor -> float32), as in PyTorch.
    """
    dx, dy = from_numpy_dtype(x.dtype), from_numpy_dtype(y.dtype)
    if x.ndim == 0 and y.ndim != 0:
        target = dy if dx.category <= dy.category else dx
    elif y.ndim == 0 and x.ndim != 0:
        target = dx if dy.category <= dx.category else dy
    else:
        target = promote_types(dx, dy)
    numpy_dtype = target.numpy_dtype
    return x.astype(numpy_dtype, copy=False), y.astype(numpy_dtype, copy=False)


def float_operands(a, b, op: str = "op"):
    """Like `operands`, but integer and bool operands give float32 (true division)."""
    x, y = operands(a, b, op)
    if _integral(x) and _integral(y):
        if isinstance(x, numbers.Number):
            y = y.astype(_FLOAT32)
        else:
            x = x.astype(_FLOAT32)
    return x, y


def _integral(value) -> bool:
    if isinstance(value, numbers.Number):
        return not isinstance(value, float)
    return value.dtype.kind in "iub"


def array_of(value):
    """The array inside a Tensor, or the value itself."""
    return value._data if isinstance(value, Tensor) else value


def normalize_dim(dim: int, ndim: int, op: str = "op") -> int:
    """A dim in [-ndim, ndim) as a non-negative index, or a clear IndexError."""
    extent = max(ndim, 1)
    if not -extent <= dim < extent:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dimension(s) "
                         f"(expected a value in [{-extent}, {extent - 1}])")
    return dim % extent


def normalize_dims(dim, ndim: int, op: str = "op"):
    """None (all dims), or a sorted tuple of non-negative dims."""
    if dim is None:
        return None
    if isinstance(dim, int | np.integer):
        return (normalize_dim(int(dim), ndim, op),)
    dims = tuple(normalize_dim(int(d), ndim, op) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dim {tuple(dim)} names a dimension more than once")
    return tuple(sorted(dims))


def broadcast_error(op: str, a, b, error: Exception) -> RuntimeError:
    shapes = [tuple(v.shape) for v in (a, b) if isinstance(v, Tensor)]
    return RuntimeError(f"{op}: shapes {' and '.join(map(str, shapes))} can't be broadcast "
                        f"together ({error})")
