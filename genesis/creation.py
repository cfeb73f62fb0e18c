"""Creating tensors: from data, filled, random, ranges.

Shapes may be given as separate ints or one tuple: `zeros(2, 3)` or
`zeros((2, 3))`. Floats default to float32, integers to int64.

Arguments are checked once per call, before anything is allocated: a size that is
not an int (`zeros(2.5)`) or a dtype that is not one is a TypeError, a negative
extent or count a RuntimeError, a value that does not fit the dtype
(`full((2,), 300, dtype=genesis.uint8)`) a `DTypeOverflowError`, as in PyTorch.
"""
from __future__ import annotations

import math
import numbers
import sys

import numpy as np

from . import dtypes
from .device import cpu, device as as_device
from .dtypes import check_fits, get_dtype
from .layouts import check_memory_format
from .random import generator_for
from .sizes import describe_value, integer, shape_of
from .tensor import Tensor, wrap_array

__all__ = ["tensor", "from_numpy", "zeros", "ones", "full", "empty", "randn", "rand", "randint", "randperm",
           "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like",
           "randn_like", "rand_like", "randint_like", "as_tensor", "asarray", "scalar_tensor"]


class AllocationError(MemoryError, RuntimeError):
    """Memory the machine can't provide: a MemoryError, as NumPy raises, and the RuntimeError
    PyTorch raises ("DefaultCPUAllocator: can't allocate memory")."""


def _allocated(op: str, allocate, shape):
    """`allocate()`, with NumPy's "array is too big" (the byte count overflows) and memory
    errors reworded as PyTorch's RuntimeError naming the size."""
    try:
        return allocate()
    except ValueError as error:
        raise RuntimeError(f"{op}: size {shape} is too large to allocate ({error})") from None
    except MemoryError as error:
        raise AllocationError(f"{op}: can't allocate size {shape}: {error}") from None


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


def _floating_dtype(dtype, op: str):
    """The NumPy dtype random samples are drawn in (float32 by default); an integer or
    bool dtype is refused as PyTorch refuses it (NotImplementedError)."""
    chosen = get_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not chosen.is_floating_point:
        raise NotImplementedError(f"{op}: samples need a floating point dtype, got {chosen!r}; "
                                  "use randint for integers")
    return chosen.numpy_dtype


def _number(value, name: str, op: str):
    """A Python number from a number or a one-element tensor; a TypeError naming the argument
    for anything else (None, a string, a list)."""
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, numbers.Real | np.number):
        return value
    raise TypeError(f"{op}: {name} must be a number, got {describe_value(value)}")


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (list, number, NumPy array or Tensor), on
    `device` or else the default device (`set_default_device`).

    >>> import genesis
    >>> genesis.tensor([1., 2., 3.], requires_grad=True)
    tensor([1., 2., 3.], requires_grad=True)
    >>> genesis.tensor(3).dtype, genesis.tensor(True).dtype, genesis.tensor(1.5).dtype
    (genesis.int64, genesis.bool, genesis.float32)
    """
    return Tensor(data, device=as_device(device), dtype=dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with `array` (dtype kept, float64 included)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    dtypes.from_numpy_dtype(array.dtype)
    return wrap_array(array, cpu)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a tensor, sharing memory where it can: a Tensor is returned as it is (graph
    kept) unless `dtype` or `device` asks for a conversion; a NumPy array on the CPU is
    wrapped, keeping its dtype (as `from_numpy`); anything else is copied (as `tensor`).

    >>> import numpy as np, genesis
    >>> array = np.zeros(2)
    >>> shared = genesis.as_tensor(array)
    >>> array[0] = 5.0
    >>> shared
    tensor([5., 0.], dtype=genesis.float64)
    """
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return asarray(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """`obj` as a tensor, as PyTorch's `asarray`: memory is shared with a Tensor or NumPy
    array when dtype and device allow and `copy` is not True; `copy=False` refuses to copy.
    A Tensor keeps its graph unless `requires_grad` is given (then the result is detached,
    and a new leaf if True), as in PyTorch 2.13.

    >>> import genesis
    >>> genesis.asarray([1, 2], dtype=genesis.float32)
    tensor([1., 2.])
    """
    chosen = get_dtype(dtype) if dtype is not None else None
    # a tensor stays where it is unless told; anything else goes to the default device
    target = as_device(device) if device is not None or not isinstance(obj, Tensor) else None
    if isinstance(obj, Tensor):
        shared = obj if requires_grad is None else obj.detach()
        result = shared.to(device=target, dtype=chosen, copy=bool(copy))
    elif isinstance(obj, np.ndarray) and copy is not True and target is cpu and (
            chosen is None or chosen.numpy_dtype == obj.dtype):
        dtypes.from_numpy_dtype(obj.dtype)
        result = wrap_array(obj, cpu)
    else:
        if copy is False:
            raise ValueError(f"asarray: can't make a tensor of this {type(obj).__name__} "
                             "without copying (copy=False); pass copy=None to allow it")
        result = tensor(obj, dtype=chosen, device=target)
    if copy is False and isinstance(obj, Tensor) and result._data is not obj._data:
        raise ValueError("asarray: the dtype or device asked for needs a copy, but copy=False")
    if requires_grad:
        result.requires_grad_(True)
    return result


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the number `s`, in the default dtype (float32) unless `dtype` says.

    >>> import genesis
    >>> genesis.scalar_tensor(3)
    tensor(3.)
    """
    chosen = get_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return tensor(s, dtype=chosen, device=device, requires_grad=requires_grad)


def _filled(op: str, fill, size: tuple, dtype, device, requires_grad, default=None):
    shape = shape_of(size, op)
    chosen = get_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())
    device = as_device(device)
    array = _allocated(op, lambda: device.xp.full(shape, fill, chosen.numpy_dtype), shape)
    return _finish(array, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros.

    >>> import genesis
    >>> genesis.zeros(2, 3).shape, genesis.zeros((2, 3)).shape
    (genesis.Size([2, 3]), genesis.Size([2, 3]))
    >>> genesis.zeros(2.5)
    Traceback (most recent call last):
    ...
    TypeError: zeros: size must be a tuple of ints, but element 0 of (2.5,) is a float (2.5)
    """
    return _filled("zeros", 0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _filled("ones", 1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (contents are arbitrary)."""
    shape = shape_of(size, "empty")
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.get_default_dtype()).numpy_dtype
    device = as_device(device)
    array = _allocated("empty", lambda: device.xp.empty(shape, numpy_dtype), shape)
    return _finish(array, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of `fill_value` (dtype inferred from it: float -> float32, int -> int64).

    >>> import genesis
    >>> genesis.full((2,), 7)
    tensor([7, 7])
    >>> genesis.full((2,), 300, dtype=genesis.uint8)
    Traceback (most recent call last):
    ...
    genesis.dtypes.DTypeOverflowError: full: the value 300 does not fit genesis.uint8 (range [0, 255])
    """
    fill_value = _number(fill_value, "fill_value", "full")
    default = dtypes.bool if isinstance(fill_value, bool | np.bool_) else (
        dtypes.int64 if isinstance(fill_value, numbers.Integral) else dtypes.get_default_dtype())
    chosen = get_dtype(dtype) if dtype is not None else default
    check_fits(fill_value, chosen, "full")
    if chosen is dtypes.bool:  # any number is a bool, even one NumPy can't convert (2**70)
        fill_value = bool(fill_value)
    return _filled("full", fill_value, (size,), chosen, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples.

    >>> import genesis
    >>> genesis.randn(2, 3).shape
    genesis.Size([2, 3])
    """
    shape = shape_of(size, "randn")
    numpy_dtype = _floating_dtype(dtype, "randn")
    device = as_device(device)
    sampler = generator_for(device, generator).standard_normal
    array = _allocated("randn", lambda: _draw(sampler, shape, numpy_dtype), shape)
    return _finish(array, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) (from `generator`, a `genesis.Generator`, when given)."""
    shape = shape_of(size, "rand")
    numpy_dtype = _floating_dtype(dtype, "rand")
    device = as_device(device)
    sampler = generator_for(device, generator).random
    array = _allocated("rand", lambda: _draw(sampler, shape, numpy_dtype), shape)
    return _finish(array, device, requires_grad)


def _bound_overload(op: str, overloads: tuple, args: tuple, keywords: dict) -> dict:
    """The arguments by name under the first of `overloads` (tuples of parameter names) that
    `args` and `keywords` (the named arguments given) fill exactly, as PyTorch picks among
    the overloads of `randint(high, size)` and `randint(low, high, size)`.

    >>> _bound_overload("randint", (("high", "size"), ("low", "high", "size")), (2, 9), {"size": (3,)})
    {'low': 2, 'high': 9, 'size': (3,)}
    """
    for names in overloads:
        if len(args) <= len(names) and set(keywords) == set(names[len(args):]):
            return dict(zip(names, args)) | keywords
    forms = " or ".join(f"{op}({', '.join(names)})" for names in overloads)
    named = ", ".join(sorted(keywords)) or "none"
    raise TypeError(f"{op}: expected {forms}; got {len(args)} positional argument(s) and the "
                    f"keyword argument(s) {named}")


def _given(**arguments) -> dict:
    """The arguments that were passed (not None), by name."""
    return {name: value for name, value in arguments.items() if value is not None}


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high), as PyTorch's two overloads `randint(high, size)`
    (low = 0) and `randint(low, high, size)`; any of them may be given by name, and `size`
    is always a tuple (or list) of ints. int64 unless `dtype` says otherwise.

    >>> import genesis
    >>> genesis.randint(0, 10, (3,)).shape, genesis.randint(5, (2, 2)).dtype
    (genesis.Size([3]), genesis.int64)
    >>> genesis.randint(10, size=(2,)).shape, genesis.randint(high=10, size=(1, 2)).shape
    (genesis.Size([2]), genesis.Size([1, 2]))
    """
    bound = _bound_overload("randint", (("high", "size"), ("low", "high", "size")), args,
                            _given(low=low, high=high, size=size))
    low, high, size = bound.get("low", 0), bound["high"], bound["size"]
    if not isinstance(size, tuple | list):
        raise TypeError(f"randint: size must be a tuple of ints, got {describe_value(size)}")
    low = integer(low, "low must be an int, got", "randint")
    high = integer(high, "high must be an int, got", "randint")
    shape = shape_of((size,), "randint")
    if high <= low:
        raise RuntimeError(f"randint: high ({high}) must be greater than low ({low})")
    chosen = get_dtype(dtype) if dtype is not None else dtypes.int64
    integral = not chosen.is_floating_point and chosen is not dtypes.bool
    for target in (dtypes.int64, chosen) if integral else (dtypes.int64,):  # drawn as int64
        smallest, largest = dtypes.value_range(target)
        if low < smallest or high - 1 > largest:
            raise dtypes.DTypeOverflowError(f"randint: the range [{low}, {high}) does not fit "
                                            f"{target!r} (range [{smallest}, {largest}])")
    device = as_device(device)
    draws = generator_for(device, generator)
    array = _allocated("randint", lambda: draws.integers(low, high, size=shape), shape)
    return _finish(array.astype(chosen.numpy_dtype), device, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless `dtype` says otherwise), drawn from
    `generator` when one is given, else from the device's generator.

    >>> import genesis
    >>> sorted(genesis.randperm(4).tolist()), genesis.randperm(3).dtype
    ([0, 1, 2, 3], genesis.int64)
    """
    n = integer(n, "n must be an int, got", "randperm")
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    chosen = get_dtype(dtype) if dtype is not None else dtypes.int64
    device = as_device(device)
    draws = generator_for(device, generator)
    xp = device.xp
    order = draws.permutation(n) if xp is np else xp.argsort(draws.random(n))
    return _finish(order.astype(chosen.numpy_dtype), device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`; ints give int64, floats float32.

    >>> import genesis
    >>> genesis.arange(4), genesis.arange(0, 1, 0.25)
    (tensor([0, 1, 2, 3]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number(value, name, "arange") for value, name in
                        ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not all(np.isfinite(value) for value in (start, end, step)):
        raise RuntimeError(f"arange: unsupported range {start} -> {end} (step {step}): "
                           "start, end and step must be finite")
    if (end > start and step < 0) or (end < start and step > 0):
        raise RuntimeError(f"arange: end ({end}) and start ({start}) are inconsistent with the "
                           f"step's sign ({step}); the range would be empty going the other way")
    integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    chosen = get_dtype(dtype) if dtype is not None else dtypes.int64 if integral else dtypes.get_default_dtype()
    if chosen is dtypes.bool:
        raise NotImplementedError("arange: a range of bools is not a thing; use an integer or "
                                  "floating point dtype")
    ratio = None if integral else (end - start) / step  # inf for a tiny (subnormal) step
    count = -((start - end) // step) if integral else \
        math.ceil(ratio) if math.isfinite(ratio) else sys.maxsize
    if count * 8 > sys.maxsize:  # NumPy would return an empty array for some of these
        raise RuntimeError(f"arange: the range {start} -> {end} (step {step}) has {count} values, "
                           "too many to allocate")
    device = as_device(device)
    xp = device.xp
    if integral and abs(end - start) > 2 ** 53:  # beyond float64's integers NumPy miscounts
        array = _allocated("arange", lambda: start + step * xp.arange(count, dtype=np.int64),
                           (count,))
    else:
        array = _allocated("arange", lambda: xp.arange(start, end, step), (count,))
    return _finish(array.astype(chosen.numpy_dtype, copy=False), device, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    start = _number(start, "start", "linspace")
    end = _number(end, "end", "linspace")
    steps = integer(steps, "steps must be an int, got", "linspace")
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    chosen = get_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if chosen is dtypes.bool:
        raise NotImplementedError("linspace: evenly spaced bools are not a thing; use an integer "
                                  "or floating point dtype")
    numpy_dtype = chosen.numpy_dtype
    device = as_device(device)
    array = _allocated("linspace", lambda: device.xp.linspace(start, end, steps), (steps,))
    return _finish(array.astype(numpy_dtype), device, requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """`steps` values base ** x for x evenly spaced from `start` to `end` inclusive.

    >>> import genesis
    >>> genesis.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    exponents = linspace(start, end, steps, dtype=dtypes.float64, device=device)
    chosen = get_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    array = (float(base) ** exponents._data).astype(chosen.numpy_dtype)
    return _finish(array, exponents._device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Identity matrix of n rows (and m columns)."""
    n = integer(n, "n must be an int, got", "eye")
    m = n if m is None else integer(m, "m must be an int, got", "eye")
    if n < 0 or m < 0:
        raise RuntimeError(f"eye: n and m must be 0 or more, got n={n}, m={m}")
    device = as_device(device)
    numpy_dtype = get_dtype(dtype if dtype is not None else dtypes.get_default_dtype()).numpy_dtype
    array = _allocated("eye", lambda: device.xp.eye(n, m, dtype=numpy_dtype) if n and m else
                       device.xp.zeros((n, m), numpy_dtype), (n, m))  # eye(2**62, 0) is empty
    return _finish(array, device, requires_grad)


def _like(input: Tensor, dtype, device, op: str, memory_format=None):
    """The dtype and device of a `*_like` result. A memory format (PyTorch's default for
    these is `preserve_format`) is checked and otherwise has no effect: genesis keeps
    row-major order (genesis/layouts.py)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {describe_value(input)}")
    check_memory_format(memory_format, input.shape, op)
    return (get_dtype(dtype) if dtype is not None else input.dtype,
            as_device(device) if device is not None else input.device)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "zeros_like", memory_format)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "ones_like", memory_format)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "full_like", memory_format)
    return full(input.shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "empty_like", memory_format)
    return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "randn_like", memory_format)
    return randn(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device, "rand_like", memory_format)
    return rand(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input: Tensor, *args, low=None, high=None, generator=None, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    """Integers uniform in [low, high) shaped like `input`, in its dtype and on its device
    unless told otherwise: `randint_like(input, high)` (low = 0) or
    `randint_like(input, low, high)`, as in PyTorch.

    >>> import genesis
    >>> x = genesis.zeros(2, 3)
    >>> genesis.randint_like(x, 5).shape, genesis.randint_like(x, high=5).dtype
    (genesis.Size([2, 3]), genesis.float32)
    """
    bound = _bound_overload("randint_like", (("high",), ("low", "high")), args,
                            _given(low=low, high=high))
    dtype, device = _like(input, dtype, device, "randint_like", memory_format)
    return randint(bound.get("low", 0), bound["high"], input.shape, generator=generator, dtype=dtype,
                   device=device, requires_grad=requires_grad)


# -- Tensor.new_*: a new tensor with this one's dtype and device unless told otherwise -----------
def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of `size` with this tensor's dtype and device (so code works on any device).

    >>> import genesis
    >>> genesis.tensor([1, 2]).new_zeros(3)
    tensor([0, 0, 0])
    """
    dtype, device = _like(self, dtype, device, "new_*")
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of `size` with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device, "new_*")
    return ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of `size` with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device, "new_*")
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere in `size`, with this tensor's dtype and device."""
    dtype, device = _like(self, dtype, device, "new_*")
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A copy of `data` as a tensor with this tensor's dtype and device (not inferred from
    the data, as in PyTorch).

    >>> import genesis
    >>> genesis.zeros(1, dtype=genesis.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=genesis.float64)
    """
    dtype, device = _like(self, dtype, device, "new_*")
    if isinstance(data, Tensor):
        data = data.detach()
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


METHODS = {"new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty,
           "new_full": new_full, "new_tensor": new_tensor}
for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
