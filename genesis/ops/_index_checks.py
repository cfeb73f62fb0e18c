"""Range checks of integer index arrays: one pass, and one wait for a GPU.

>>> import numpy as np, genesis
>>> any_outside(genesis.device("cpu"), np.array([0, 3, -1]), 4)
True
"""
from __future__ import annotations

import numpy as np

from ._kernels import Reduction

__all__ = ["any_outside"]

# Read as unsigned, a negative index (an ignored -100 too) is larger than any valid one, so
# one comparison finds both ends.
_ANY_OUTSIDE = Reduction(
    "genesis_any_outside", "int64 index, int64 bound", "bool outside",
    "(unsigned long long) index >= (unsigned long long) bound", "a || b", "outside = a", "false",
    lambda device, index, bound, **where: (
        index.view(np.dtype(f"u{index.dtype.itemsize}")) >= bound).any(**where))


def any_outside(device, indices, bound: int) -> bool:
    """Whether any of the integer `indices` (an array on `device`) is outside 0..bound-1."""
    if not indices.size:
        return False
    return bool(_ANY_OUTSIDE(device, indices, bound, axis=None, keepdims=False))
