"""Evaluating a long elementwise formula block by block on the CPU.

A formula such as gelu's (an erf of some 25 NumPy passes) makes a temporary array per
pass. On a large input every temporary is a fresh multi-megabyte allocation whose pages
the kernel must fault in and zero, and every pass streams through main memory. Evaluated
on blocks of 64K elements instead, the temporaries are small (reused from the heap, hot
in the L2 cache) and only the output is large: about 3x faster on a 4 MB input.

>>> import numpy as np
>>> x = np.arange(300_000, dtype=np.float32)
>>> bool((in_blocks(np, lambda a: a * 2 + 1, x) == x * 2 + 1).all())
True
"""
from __future__ import annotations

import numpy as np

_BLOCK = 1 << 16  # elements per block: 256 KB of float32, a few temporaries fit in L2


def in_blocks(xp, formula, *arrays):
    """`formula(*arrays)` for an elementwise `formula`, block by block on the CPU when the
    arrays are large and of one shape (in one call otherwise)."""
    first = arrays[0]
    if xp is not np or first.size <= 2 * _BLOCK or any(a.shape != first.shape for a in arrays):
        return formula(*arrays)
    flats = [array.reshape(-1) for array in arrays]  # a view when contiguous, else one copy
    size = first.size
    head = formula(*(flat[:_BLOCK] for flat in flats))
    out = np.empty(size, head.dtype)
    out[:_BLOCK] = head
    for start in range(_BLOCK, size, _BLOCK):
        stop = start + _BLOCK
        out[start:stop] = formula(*(flat[start:stop] for flat in flats))
    return out.reshape(first.shape)
