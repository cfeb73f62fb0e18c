"""Creating tensors: from data, filled, random, ranges.

Shapes may be given as separate ints or one tuple: `zeros(2, 3)` or
`zeros((2, 3))`. Floats default to float32, integers to int64.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .device import cpu, device as as_device
from .dtypes import get_dtype
from .random import generator_for
from .tensor import Tensor, wrap_array

__all__ = ["tensor", "from_numpy", "zeros", "ones", "full", "empty", "randn", "rand", "randint",
           "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like",
           "randn_like", "rand_like", "randint_like"]


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], tuple | list):
        size = size[0]
    shape = tuple(int(extent) for extent in size)
    if any(extent < 0 for extent in shape):
        raise RuntimeError(f"negative extent in shape {shape}")
    return shape


def _finish(array, device, requires_grad: bool) -> Tensor:
    result = wrap_array(array, device)
    if requires_grad:
        result.requires_grad = True
    return result


def _draw(sampler, shape: tuple, numpy_dtype):
    """Samples drawn directly in float32/float64; other dtypes are cast from float32."""
    if numpy_dtype in (np.float32, np.float64):
        return sampler(shape, dtype=numpy_dtype)
    return sampler(shape, dtype=np.float32).astype(numpy_dtype)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (list, number, NumPy array or Tensor).

    >>> import genesis
    >>> genesis.tensor([1., 2., 3.], requires_grad=True)
    tensor([1., 2., 3.], requires_grad=True)
    >>> genesis.tensor(3).dtype, genesis.tensor(True).dtype, genesis.tensor(1.5).dtype
    (genesis.int64, genesis.bool, genesis.float32)
    """
    return Tensor(data, device=device, dtype=dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with `array` (dtype kept, float64 included)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    dtypes.from_numpy_dtype(array.dtype)
    return wrap_array(array, cpu)


def _filled(fill, size, dtype, device, requires_grad, default=None):
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else (default or dtypes.float32)).numpy_dtype
    return _finish(device.xp.full(_shape(size), fill, numpy_dtype), device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (contents are arbitrary)."""
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.float32).numpy_dtype
    return _finish(device.xp.empty(_shape(size), numpy_dtype), device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of `fill_value` (dtype inferred from it: float -> float32, int -> int64)."""
    default = dtypes.bool if isinstance(fill_value, bool) else (
        dtypes.int64 if isinstance(fill_value, int) else dtypes.float32)
    return _filled(fill_value, (size,) if isinstance(size, int) else size, dtype, device,
                   requires_grad, default)


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples.

    >>> import genesis
    >>> genesis.randn(2, 3).shape
    (2, 3)
    """
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.float32).numpy_dtype
    array = _draw(generator_for(device).standard_normal, _shape(size), numpy_dtype)
    return _finish(array, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.float32).numpy_dtype
    array = _draw(generator_for(device).random, _shape(size), numpy_dtype)
    return _finish(array, device, requires_grad)


def randint(low, high=None, size=(), *, dtype=None, device=None) -> Tensor:
    """Integers uniform in [low, high) (`randint(high, size)` means low = 0)."""
    if high is None:
        low, high = 0, low
    if isinstance(size, int):
        size = (size,)
    if high <= low:
        raise RuntimeError(f"randint: high ({high}) must be greater than low ({low})")
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.int64).numpy_dtype
    array = generator_for(device).integers(low, high, size=_shape(tuple(size)))
    return _finish(array.astype(numpy_dtype), device, False)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`; ints give int64, floats float32.

    >>> import genesis
    >>> genesis.arange(4), genesis.arange(0, 1, 0.25)
    (tensor([0, 1, 2, 3]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        integral = all(isinstance(v, int | np.integer) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.float32
    device = as_device(device)
    array = device.xp.arange(start, end, step).astype(get_dtype(dtype).numpy_dtype, copy=False)
    return _finish(array, device, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.float32).numpy_dtype
    array = device.xp.linspace(start, end, int(steps)).astype(numpy_dtype)
    return _finish(array, device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Identity matrix of n rows (and m columns)."""
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.float32).numpy_dtype
    return _finish(device.xp.eye(n, m, dtype=numpy_dtype), device, requires_grad)


def _like(input: Tensor, dtype, device):
    return (get_dtype(dtype) if dtype is not None else input.dtype,
            as_device(device) if device is not None else input.device)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return randn(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return rand(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return randint(low, high, input.shape, dtype=dtype, device=device)


# -- Tensor.new_*: a new tensor with this one's dtype and device unless told otherwise -----------
def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of `size` with this tensor's dtype and device (so code works on any device).

    >>> import genesis
    >>> genesis.tensor([1, 2]).new_zeros(3)
    tensor([0, 0, 0])
    """
    dtype, device = _like(self, dtype, device)
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of `size` with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device)
    return ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of `size` with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device)
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere in `size`, with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A copy of `data` as a tensor with this tensor's dtype and device (not inferred from
    the data, as in PyTorch).

    >>> import genesis
    >>> genesis.zeros(1, dtype=genesis.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=genesis.float64)
    """
    dtype, device = _like(self, dtype, device)
    if isinstance(data, Tensor):
        data = data.detach()
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


METHODS = {"new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty,
           "new_full": new_full, "new_tensor": new_tensor}
for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
