"""bfloat16 results as PyTorch gives them.

NumPy (with ml_dtypes) computes many functions of a bfloat16 array in float32: a Python
float scalar (`x * 0.5`), and the ops that promote their input to a float first (exp,
tanh, gelu, erf, ...), give float32. PyTorch computes these in float32 as well and rounds
the result to bfloat16, once. `rounded_results` does that rounding for a built-in op's
result: an op whose inputs make its result bfloat16 by PyTorch's promotion rules (a
dimensioned bfloat16 tensor, no dimensioned tensor of another floating dtype) and that
names no dtype of its own (`to(float32)`, `sum(dtype=...)` keep what they ask for).

Nothing is looked at until a bfloat16 dtype is first used (`dtypes.bfloat16_use.seen`).

>>> import genesis
>>> x = genesis.tensor([1.0, 2.0]).to(genesis.bfloat16)
>>> x.exp().dtype, (x * 0.5).dtype, x.float().exp().dtype
(genesis.bfloat16, genesis.bfloat16, genesis.float32)
"""
from __future__ import annotations

import numpy as np

from ..dtypes import DType, bfloat16
from ..tensor import Tensor

_WIDER = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def rounded_results(args: tuple, kwargs: dict, result):
    """`result` of a built-in op's forward on `args`/`kwargs` (an array, a Tensor or a tuple
    of them), its float32/float64 arrays rounded to bfloat16 where PyTorch's result is
    bfloat16; the same object otherwise."""
    if result.__class__ is tuple:
        if not any(_wide(value) for value in result) or not _bfloat16_result(args, kwargs):
            return result
        return tuple(_rounded(value) for value in result)
    if not _wide(result) or not _bfloat16_result(args, kwargs):
        return result
    return _rounded(result)


def _wide(value) -> bool:
    array = value._data if isinstance(value, Tensor) else value
    return getattr(array, "dtype", None) in _WIDER


def _rounded(value):
    if isinstance(value, Tensor):  # a Tensor forward made (and may have saved): rounded in place
        if value._data.dtype in _WIDER:
            value._data = value._data.astype(bfloat16.numpy_dtype)
        return value
    if getattr(value, "dtype", None) in _WIDER:
        return value.astype(bfloat16.numpy_dtype)
    return value


def _bfloat16_result(args: tuple, kwargs: dict) -> bool:
    """Whether PyTorch's promotion makes bfloat16 of these inputs: a bfloat16 tensor of the
    highest rank present (dimensioned over 0-d), no other floating tensor of that rank, and
    no dtype asked for."""
    dimensioned, zero_d = set(), set()
    for value in _inputs(args, kwargs):
        if isinstance(value, Tensor):
            dtype = value._data.dtype
            if dtype.kind == "f" or dtype == bfloat16.numpy_dtype:
                (dimensioned if value._data.ndim else zero_d).add(dtype)
        elif isinstance(value, DType | np.dtype) or isinstance(value, type) and \
                value in _DTYPE_TYPES or value.__class__ is str and _names_dtype(value):
            return False
    floats = dimensioned or zero_d
    return floats == {bfloat16.numpy_dtype}


def _inputs(args: tuple, kwargs: dict):
    """The arguments, one level into lists and tuples (cat, stack, einsum's operands)."""
    for value in (*args, *kwargs.values()):
        if value.__class__ is list or value.__class__ is tuple:
            yield from value
        else:
            yield value


def _names_dtype(text: str) -> bool:
    return text.removeprefix("torch.").removeprefix("genesis.") in _DTYPE_NAMES


# a dtype passed as a type (dtype=np.float32, .to(float)) or by name (dtype="float32")
_DTYPE_TYPES = (float, int, bool, np.float16, np.float32, np.float64, np.int32, np.int64)
_DTYPE_NAMES = frozenset(("float16", "float32", "float64", "bfloat16", "half", "float",
                          "double"))
