"""Turning op arguments into arrays: unwrapping, PyTorch dtype promotion, device checks,
and the small array helpers ops share (float promotion, quiet float errors, zero gradients)."""
from __future__ import annotations

import numbers

import numpy as np

from ..device import device_mismatch_message
from ..dtypes import bfloat16, float16, from_numpy_dtype, int64, promote_types
from ..dtypes import bool as bool_dtype, default_float
from ..sizes import normalize_dim, normalize_dims  # noqa: F401 (the ops import them from here)
from ..tensor import Tensor, wrap_array

_INT64 = np.dtype(np.int64)
_NUMBER_DTYPES = {bool: bool_dtype, int: int64}


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
    return device_mismatch_message(op, a.device, b.device)


def _with_scalar(array, scalar, op: str):
    kind = array.dtype.kind
    scalar_type = scalar.__class__
    if scalar_type is float:
        if kind in "iub":
            array = array.astype(default_float.numpy)
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
    if isinstance(scalar, np.ndarray):
        return _with_numpy_array(array, scalar, op)
    raise TypeError(f"{op}: unsupported operand of type {type(scalar).__name__}; expected a "
                    "Tensor or a Python number")


def _with_numpy_array(array, other: np.ndarray, op: str):
    """A NumPy array operand of a tensor on the CPU: both in the dtype NumPy gives them, as
    PyTorch lets NumPy compute `torch.ones(2) + np.ones(2, dtype=np.int64)` (a float64
    tensor); here the result keeps its graph. Beside a GPU tensor it is a device mismatch."""
    if not isinstance(array, np.ndarray):
        raise RuntimeError(f"{op}: a NumPy array (on the CPU) can't meet a tensor on a GPU; make "
                           "it a tensor on that device first (genesis.tensor(array, device=...))")
    target = np.result_type(array, other)
    from_numpy_dtype(target)  # a TypeError naming a dtype genesis has no equivalent of
    return array.astype(target, copy=False), other.astype(target, copy=False)


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


def result_type(*values) -> np.dtype:
    """The NumPy dtype PyTorch gives an op on `values` (Tensors, Python numbers, None skipped).

    Dimensioned tensors rank first, then 0-d tensors, then Python numbers
    (bool, int64, float32); a lower rank only counts when it is of a higher
    category (bool < integer < floating), as in `torch.result_type`.

    >>> import genesis
    >>> result_type(genesis.tensor([1, 2], dtype=genesis.int32), 2.5, True)
    dtype('float32')
    >>> half, double = genesis.tensor([1.], dtype=genesis.float16), genesis.tensor(2.0).double()
    >>> result_type(half, double)  # a 0-d tensor does not widen a dimensioned one
    dtype('float16')
    """
    ranks = [None, None, None]  # dimensioned, 0-d, number
    for value in values:
        if value is None:
            continue
        if isinstance(value, Tensor):
            rank, dtype = (0 if value._data.ndim else 1), from_numpy_dtype(value._data.dtype)
        else:
            rank, dtype = 2, _number_dtype(value)
        ranks[rank] = dtype if ranks[rank] is None else promote_types(ranks[rank], dtype)
    dtype = _combine(ranks[0], _combine(ranks[1], ranks[2]))
    if dtype is None:
        raise TypeError("result_type: expected at least one Tensor or number")
    return dtype.numpy_dtype


def _number_dtype(value):
    dtype = _NUMBER_DTYPES.get(value.__class__)
    if dtype is not None:
        return dtype
    if value.__class__ is float:
        return default_float.dtype
    if isinstance(value, np.generic | np.ndarray) and np.ndim(value) == 0:
        return _number_dtype(value.item())
    if isinstance(value, numbers.Integral):
        return int64
    if isinstance(value, numbers.Real):
        return default_float.dtype
    raise TypeError(f"unsupported operand of type {type(value).__name__}; expected a Tensor or "
                    "a Python number")


def _combine(higher, lower):
    """PyTorch's rule for merging a higher-ranked dtype with a lower-ranked one."""
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher.category == 0 or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def cast_to(value, numpy_dtype):
    """The array of a Tensor cast to `numpy_dtype` (no copy if it already is), or the number."""
    if isinstance(value, Tensor):
        return value._data.astype(numpy_dtype, copy=False)
    return value


def as_floating(array):
    """`array`, with integers and bools promoted to the default float dtype (float32 unless set) (PyTorch's float math on integers)."""
    return array if array.dtype.kind == "f" else array.astype(default_float.numpy)


def ignore_float_errors(function):
    """Run `function` with NumPy's divide/overflow/invalid warnings off.

    PyTorch returns inf and nan silently (log(0), 1/0, exp(1000)); so do we.
    """
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")(function)


def float_operands(a, b, op: str = "op"):
    """Like `operands`, but integer and bool operands give the default float dtype (true division)."""
    x, y = operands(a, b, op)
    if kind_of(x) in "iub" and kind_of(y) in "iub":
        if not isinstance(x, numbers.Number):
            x = x.astype(default_float.numpy)
        if not isinstance(y, numbers.Number):
            y = y.astype(default_float.numpy)
    return x, y


def kind_of(value) -> str:
    """NumPy's kind letter ("b", "i", "u", "f") of an array or a Python number from `operands`."""
    if isinstance(value, numbers.Number):
        return "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
    return value.dtype.kind


def both_integral(x, y) -> bool:
    """Whether both operands (arrays or numbers from `operands`) are integers or bools."""
    return kind_of(x) in "iub" and kind_of(y) in "iub"


def device_of(a, b):
    """The device of the first Tensor among two operands."""
    return a._device if isinstance(a, Tensor) else b._device


def reflected(function):
    """The reflected operator (`__radd__`) of a binary function: other OP self."""
    def method(self, other):
        return function(other, self)

    method.__name__ = f"__r{function.__name__}__"
    return method


def zeros_of(tensor: Tensor) -> Tensor:
    """A tensor of zeros like `tensor` (same shape, dtype and device): a gradient that is 0."""
    return wrap_array(tensor._device.xp.zeros_like(tensor._data), tensor._device)


def common_dtype_arrays(tensors) -> list:
    """The tensors' arrays, cast to PyTorch's promoted dtype when their dtypes differ (cat,
    stack, einsum)."""
    arrays = [t._data for t in tensors]
    first = arrays[0].dtype
    if all(array.dtype == first for array in arrays):
        return arrays
    target = from_numpy_dtype(first)
    for array in arrays[1:]:
        target = promote_types(target, from_numpy_dtype(array.dtype))
    return [array.astype(target.numpy_dtype, copy=False) for array in arrays]


def rounded_product(out, dtype):
    """A matrix product (plus bias) `out` in `dtype`: NumPy multiplies bfloat16 (ml_dtypes)
    into float32, which is rounded back once at the end, as PyTorch's bfloat16 products
    (accumulated in float32) are.

    >>> import numpy as np, ml_dtypes
    >>> x = np.ones((2, 2), ml_dtypes.bfloat16)
    >>> (x @ x).dtype, rounded_product(x @ x, x.dtype).dtype
    (dtype('float32'), dtype(bfloat16))
    """
    return out if out.dtype == dtype else out.astype(dtype)


_TWO_BYTE_FLOATS = frozenset(dtype.numpy_dtype for dtype in (float16, bfloat16)
                             if dtype.numpy_dtype is not None)


def accumulated_in_float32(compute, array, *others):
    """`compute(array, *others)`, computed in float32 and rounded once to the array's dtype
    when it is float16 or bfloat16 (the others then of its dtype too), as PyTorch's CPU
    kernels of those accumulate (sum, mean, var, norms, cumsum, the softmax gradients); as
    it is otherwise.

    >>> x = np.full(4096, 1.0, np.float16)
    >>> float(x.cumsum()[-1]), float(accumulated_in_float32(np.cumsum, x)[-1])
    (2048.0, 4096.0)
    """
    if array.dtype in _TWO_BYTE_FLOATS:
        wide = (value.astype(np.float32) for value in (array, *others))
        return compute(*wide).astype(array.dtype)
    return compute(array, *others)


def saved_with_input(ctx, a: Tensor, out):
    """`out` (an array) as a tensor saved with `a` for backward when `a` needs a gradient (the
    backward of a product, a norm, ... reads both); returned for forward to return."""
    if ctx.needs_input_grad[0]:
        out = wrap_array(out, a._device)
        ctx.save_for_backward(a, out)
    return out


def array_of(value):
    """The array inside a Tensor, or the value itself."""
    return value._data if isinstance(value, Tensor) else value


def broadcast_error(op: str, a, b, error: Exception) -> RuntimeError:
    shapes = [tuple(v.shape) for v in (a, b) if isinstance(v, Tensor)]
    return RuntimeError(f"{op}: shapes {' and '.join(map(str, shapes))} can't be broadcast "
                        f"together ({error})")
