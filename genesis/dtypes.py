"""Data types: one `DType` object per supported element type.

>>> import genesis
>>> genesis.float32.is_floating_point, genesis.float32.itemsize
(True, 4)
>>> genesis.tensor([1, 2]).dtype
genesis.int64
"""
from __future__ import annotations

import builtins
import math

import numpy as np

__all__ = [
    "DType", "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32",
    "int64", "uint8", "bool", "half", "float", "double", "long", "int", "short",
    "get_dtype", "promote_types", "get_default_dtype", "set_default_dtype", "DTypeOverflowError", "check_fits",
    "check_array_fits", "finfo", "iinfo", "show_dtypes_as",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class DType:
    """An element type: its name, NumPy type, size in bytes and category."""

    __slots__ = ("name", "numpy_dtype", "itemsize", "is_floating_point", "category")

    def __init__(self, name: str, numpy_dtype, category: int):
        self.name = name
        self.numpy_dtype = np.dtype(numpy_dtype) if numpy_dtype is not None else None
        self.itemsize = self.numpy_dtype.itemsize if numpy_dtype is not None else 2
        self.category = category
        self.is_floating_point = category == _FLOAT

    def __repr__(self) -> str:
        return f"{_shown_as[0]}.{self.name}"

    def __reduce__(self):
        return (get_dtype, (self.name,))


_shown_as = ["genesis"]  # the module a dtype's repr names: "torch" while genesis serves torch


def show_dtypes_as(module: str) -> str:
    """Print dtypes as `module.name` from now on ("torch" while `genesis.compat.serve_torch`
    runs a PyTorch script: `str(x.dtype)` is "torch.float32" there, as the script expects);
    returns the module named before.

    >>> before = show_dtypes_as("torch"); repr(float32), show_dtypes_as(before)
    ('torch.float32', 'torch')
    >>> float32
    genesis.float32
    """
    before, _shown_as[0] = _shown_as[0], module
    return before


float16 = DType("float16", np.float16, _FLOAT)
float32 = DType("float32", np.float32, _FLOAT)
float64 = DType("float64", np.float64, _FLOAT)
int8 = DType("int8", np.int8, _INT)
int16 = DType("int16", np.int16, _INT)
int32 = DType("int32", np.int32, _INT)
int64 = DType("int64", np.int64, _INT)
uint8 = DType("uint8", np.uint8, _INT)
bool = DType("bool", np.bool_, _BOOL)


def _ml_dtypes():
    """The ml_dtypes package (NumPy's bfloat16), or None where it is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


_ML_DTYPES = _ml_dtypes()
bfloat16 = DType("bfloat16", _ML_DTYPES.bfloat16 if _ML_DTYPES is not None else None, _FLOAT)

half, float, double = float16, float32, float64


class _Bfloat16Use:
    """`seen` turns True once a bfloat16 dtype is first used (looked up or met in an array):
    from then on built-in ops round results NumPy made float32 back to bfloat16, as PyTorch
    does (genesis.autograd.bfloat16_results); until then they skip that look."""

    seen = False


bfloat16_use = _Bfloat16Use()
short, int, long = int16, int32, int64

_ALL = (float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, bool)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64)
_BY_NUMPY = {d.numpy_dtype: d for d in _ALL if d.numpy_dtype is not None}
FLOATING_DTYPES = tuple(d for d in _ALL if d.is_floating_point and d.numpy_dtype is not None)
FLOATING_NUMPY_DTYPES = frozenset(d.numpy_dtype for d in _ALL
                                  if d.is_floating_point and d.numpy_dtype is not None)
_PYTHON_TYPES = {builtins.int: int64, builtins.bool: bool}


class _DefaultFloat:
    """The floating dtype new tensors get when none is asked for (PyTorch's default dtype):
    Python floats, `zeros(2)`, `randn(3)`, float math on integers. `dtype` and `numpy` (its
    NumPy dtype) are read on hot paths, so they are plain attributes."""

    def __init__(self, dtype: DType):
        self.dtype, self.numpy = dtype, np.dtype(dtype.numpy_dtype)


default_float = _DefaultFloat(float32)


def get_default_dtype() -> DType:
    """The dtype given to Python floats and new floating tensors: float32 unless changed by
    `set_default_dtype`, as in PyTorch.

    >>> get_default_dtype()
    genesis.float32
    """
    return default_float.dtype


def set_default_dtype(dtype) -> None:
    """Make `dtype` (a floating dtype) the one Python floats and new floating tensors get,
    as `torch.set_default_dtype`; tensors that exist keep theirs.

    >>> import genesis
    >>> genesis.set_default_dtype(genesis.float64)
    >>> genesis.tensor([1.5]).dtype, genesis.zeros(2).dtype
    (genesis.float64, genesis.float64)
    >>> genesis.set_default_dtype(genesis.float32)
    """
    chosen = get_dtype(dtype)
    if not chosen.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating point dtypes can be the default, got "
                        f"{chosen!r}; pass genesis.float32 or genesis.float64")
    default_float.__init__(chosen)


def get_dtype(spec) -> DType:
    """Turn a DType, a name ('float32'), a NumPy dtype or a Python type into a DType.

    >>> get_dtype("float64"), get_dtype(np.int32), get_dtype(builtins.float)
    (genesis.float64, genesis.int32, genesis.float32)
    """
    if spec.__class__ is DType:
        if spec is bfloat16:
            if spec.numpy_dtype is None:
                raise TypeError("genesis.bfloat16 needs the ml_dtypes package: pip install "
                                "ml_dtypes")
            bfloat16_use.seen = True
        return spec
    if isinstance(spec, str):
        name = spec.removeprefix("genesis.").removeprefix("torch.")
        if name in _BY_NAME:
            return get_dtype(_BY_NAME[name])
        raise TypeError(f"unknown dtype {spec!r}; expected one of {sorted(_BY_NAME)}")
    if spec is builtins.float:
        return default_float.dtype
    if isinstance(spec, type) and spec in _PYTHON_TYPES:
        return _PYTHON_TYPES[spec]
    try:
        found = _BY_NUMPY[np.dtype(spec)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {spec!r}; genesis supports {[d.name for d in _ALL]}") from None
    if found is bfloat16:
        bfloat16_use.seen = True
    return found


def from_numpy_dtype(numpy_dtype) -> DType:
    """The DType of a NumPy dtype object (fast path used by Tensor.dtype)."""
    try:
        found = _BY_NUMPY[numpy_dtype]
    except KeyError:
        raise TypeError(f"NumPy dtype {numpy_dtype} has no genesis equivalent") from None
    if found is bfloat16:
        bfloat16_use.seen = True
    return found


def promote_types(a: DType, b: DType) -> DType:
    """The dtype of a binary op on tensors of dtypes `a` and `b` (PyTorch's rules).

    >>> promote_types(int64, float16), promote_types(float16, float32)
    (genesis.float16, genesis.float32)
    """
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return _BY_NUMPY[np.promote_types(a.numpy_dtype, b.numpy_dtype)]


class DTypeOverflowError(OverflowError, ValueError, RuntimeError):
    """A value that does not fit its dtype: 300 as uint8, 1e40 as float16, 2**70 as int64.

    An OverflowError, as NumPy raises; also a RuntimeError and a ValueError, the types
    PyTorch raises for it (RuntimeError "value cannot be converted to type uint8 without
    overflow", ValueError "Overflow when unpacking long long").
    """


def value_range(dtype: DType) -> tuple:
    """The smallest and largest value of `dtype` (finite ones for floating dtypes).

    >>> value_range(uint8), value_range(float16), value_range(bfloat16)
    ((0, 255), (-65504.0, 65504.0), (-3.3895313892515355e+38, 3.3895313892515355e+38))
    """
    bounds = _RANGES.get(dtype)
    if bounds is None:
        info = finfo(dtype) if dtype.is_floating_point else np.iinfo(dtype.numpy_dtype)
        kind = builtins.float if dtype.is_floating_point else builtins.int
        bounds = _RANGES[dtype] = (kind(info.min), kind(info.max))
    return bounds


_RANGES: dict = {}
_BOOLS = (builtins.bool, np.bool_)
_FLOATS = (builtins.float, np.floating)


def check_fits(value, dtype: DType, op: str) -> None:
    """Raise DTypeOverflowError when the Python number `value` can't be stored as `dtype`:
    outside an integer dtype's range (or NaN/inf for one), or a finite number beyond a
    floating dtype's largest (inf and NaN fit any floating dtype). Bools fit every dtype.

    >>> check_fits(255, uint8, "full")
    >>> check_fits(300, uint8, "full")
    Traceback (most recent call last):
    ...
    genesis.dtypes.DTypeOverflowError: full: the value 300 does not fit genesis.uint8 (range [0, 255])
    """
    if dtype is bool or isinstance(value, _BOOLS):
        return
    low, high = value_range(dtype)
    finite = not isinstance(value, _FLOATS) or math.isfinite(value)
    if dtype.is_floating_point:
        fits = not finite or low <= value <= high
    else:  # as PyTorch: 127.5 does not fit int8 (Python compares ints and floats exactly)
        fits = finite and low <= value <= high
    if not fits:
        raise DTypeOverflowError(f"{op}: the value {_shown(value)} does not fit {dtype!r} "
                                 f"(range [{low}, {high}])")


def _shown(value) -> str:
    """A number for a message: its repr, shortened when it has hundreds of digits."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-6:]} ({len(text)} characters)"


def check_array_fits(array: np.ndarray, dtype: DType, op: str) -> None:
    """Raise DTypeOverflowError when numbers of `array` (an int or float NumPy array) fall
    outside the integer `dtype`'s range (or are NaN/inf): the values a cast would wrap.
    One pass over the array; floating targets are not checked (1e40 becomes inf there,
    as in NumPy and PyTorch).

    >>> check_array_fits(np.array([1.0, 127.5]), int8, "tensor")
    Traceback (most recent call last):
    ...
    genesis.dtypes.DTypeOverflowError: tensor: the value 127.5 does not fit genesis.int8 (range [-128, 127])
    """
    if dtype.is_floating_point or dtype is bool or array.size == 0 or array.dtype.kind not in "iuf":
        return
    low, high = value_range(dtype)
    smallest, largest = array.min(), array.max()
    if array.dtype.kind == "f" and not (np.isfinite(smallest) and np.isfinite(largest)):
        culprit = array[~np.isfinite(array)].flat[0]
    elif smallest < low:
        culprit = smallest
    elif largest > high or largest >= high + 1:  # the second: 2.0**63 > int64's max, which
        culprit = largest                        # becomes 2.0**63 itself when compared as a float
    else:
        return
    raise DTypeOverflowError(f"{op}: the value {culprit.item()!r} does not fit {dtype!r} "
                             f"(range [{low}, {high}])")


class finfo:
    """Limits of a floating dtype (PyTorch's `torch.finfo`): bits, eps, max, min, tiny
    (the smallest normal number), smallest_normal, resolution.

    >>> finfo(float32).eps == 2 ** -23, finfo().bits
    (True, 32)
    """

    def __init__(self, dtype: DType | None = None):
        dtype = get_default_dtype() if dtype is None else get_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"finfo: {dtype!r} is not a floating point dtype; use iinfo for integers")
        # NumPy's finfo does not know ml_dtypes' bfloat16; ml_dtypes has its own
        info = (_ML_DTYPES.finfo if dtype.name == "bfloat16" else np.finfo)(dtype.numpy_dtype)
        self.dtype = dtype.name
        self.bits, self.eps = info.bits, builtins.float(info.eps)
        self.max, self.min = builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = builtins.float(info.resolution)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.smallest_normal}, tiny={self.tiny}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (PyTorch's `torch.iinfo`): bits, min, max.

    >>> iinfo(int64).max == 2 ** 63 - 1, iinfo(uint8).min
    (True, 0)
    """

    def __init__(self, dtype: DType):
        dtype = get_dtype(dtype)
        if dtype.is_floating_point:
            raise TypeError(f"iinfo: {dtype!r} is a floating point dtype; use finfo")
        info = np.iinfo(np.uint8 if dtype.numpy_dtype == np.bool_ else dtype.numpy_dtype)
        self.dtype = dtype.name
        self.bits, self.min, self.max = info.bits, builtins.int(info.min), builtins.int(info.max)
        if dtype.numpy_dtype == np.bool_:
            self.bits, self.max = 8, 1

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
