"""`torch.tensor`, served by genesis: PyTorch's dtype inference for NumPy data.

`genesis.tensor` gives a NumPy float64 array the default float dtype (float32), as the
Genesis specification asks. PyTorch keeps a NumPy value's own dtype: `torch.tensor` of a
float64 array is float64, and in a list, a NumPy scalar counts with its dtype where a
Python float counts as the default dtype (`[np.float64(1.0), 2.0]` is float64,
`[np.int64(1), 2.5]` float32). A PyTorch script served by genesis gets PyTorch's result.
Data holding no NumPy value is left to `genesis.tensor`, whose inference is PyTorch's.

>>> import numpy as np
>>> tensor(np.array([1.0, 2.0])).dtype, tensor([np.float64(1.0), 2.0]).dtype
(genesis.float64, genesis.float64)
>>> tensor([np.int64(1), 2.5]).dtype, tensor([1.0, 2.0]).dtype
(genesis.float32, genesis.float32)
"""
from __future__ import annotations

import numpy as np

from ..creation import tensor as genesis_tensor
from .. import dtypes
from ..dtypes import from_numpy_dtype, get_default_dtype, promote_types
from ..tensor import Tensor

__all__ = ["tensor"]


def tensor(data, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of `data`, its dtype inferred as PyTorch infers it
    (see the module docstring); `pin_memory` has no effect on the CPU."""
    if dtype is None and _holds_numpy(data):
        dtype = _inferred_dtype(data)
    return genesis_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _holds_numpy(data) -> bool:
    if isinstance(data, (np.ndarray, np.generic)):
        return True
    if isinstance(data, (list, tuple)):
        return any(_holds_numpy(item) for item in data)
    return False


def _inferred_dtype(data):
    """The dtype PyTorch gives `data`: each element's own (a Python float the default
    float dtype, an int int64, a bool bool), promoted across categories and sizes; None
    where an element is of a kind left to `genesis.tensor` to judge (complex, strings)."""
    if isinstance(data, (np.ndarray, np.generic)):
        return from_numpy_dtype(data.dtype) if data.dtype.kind in "biuf" else None
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (list, tuple)):
        found = None
        for item in data:
            dtype = _inferred_dtype(item)
            if dtype is None:
                return None
            found = dtype if found is None else promote_types(found, dtype)
        return found if found is not None else get_default_dtype()  # [] is float
    if isinstance(data, bool):
        return dtypes.bool
    if isinstance(data, int):
        return dtypes.int64
    if isinstance(data, float):
        return get_default_dtype()
    return None
