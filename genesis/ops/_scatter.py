"""Unbuffered scatter-add, the one place that knows NumPy and CuPy spell it differently.

`target[index] += values` adds only once per repeated index; gradients of
indexing need every repeat to count. NumPy does that with `np.add.at`; CuPy
with `cupy.add.at` from version 13 on and `cupyx.scatter_add` before (now
deprecated), resolved once. `np.add.at` is up to ~70x slower than `+=`, so on
the CPU a key that can't repeat a position (a mask, or one index array with
distinct entries, as in a permutation) takes the plain `+=`.
"""
from __future__ import annotations

import numpy as np

from ..determinism import are_deterministic_algorithms_enabled, refuse_nondeterministic

__all__ = ["add_at"]

_cupy_add_at: dict = {}  # CuPy namespace's id -> its add-at function


def add_at(xp, target, index, values) -> None:
    """Add `values` into `target` at `index` in place, repeated indices accumulating.

    >>> import numpy as np
    >>> target = np.zeros(3)
    >>> add_at(np, target, np.array([0, 2, 2]), np.ones(3))
    >>> target
    array([1., 0., 2.])
    """
    if xp is np:
        if _distinct_positions(target, index):
            target[index] += values
        else:
            np.add.at(target, index, values)
    else:
        if are_deterministic_algorithms_enabled() and not _distinct_positions(target, _on_host(index)):
            refuse_nondeterministic("adding into repeated positions on a GPU (atomic additions: "
                                    "the backward of indexing, gather or embedding, index_add_)")
        (_cupy_add_at.get(id(xp)) or _resolve_cupy_add_at(xp))(target, index, values)


def _distinct_positions(target, index) -> bool:
    """Whether `index` names each position at most once: no integer array in it, or one
    integer array without repeats after whole slices (`x[idx]`, `x[:, idx]`)."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [position for position, item in enumerate(items)
              if isinstance(item, np.ndarray) and item.ndim and item.dtype.kind in "iu"]
    if not arrays:
        return True
    position = arrays[0]
    if len(arrays) > 1 or any(item is not Ellipsis for item in items[position + 1:]) or not all(
            isinstance(item, slice) and item == slice(None) for item in items[:position]):
        return False
    flat = items[position].reshape(-1)
    extent = target.shape[position]
    return np.unique(np.where(flat < 0, flat + extent, flat)).size == flat.size


def _on_host(index):
    """The index with its device arrays copied to the host (to check for repeats)."""
    items = index if isinstance(index, tuple) else (index,)
    host = tuple(item.get() if hasattr(item, "get") and not isinstance(item, np.ndarray) else item
                 for item in items)
    return host if isinstance(index, tuple) else host[0]


def _resolve_cupy_add_at(cupy):
    """`cupy.add.at`, or `cupyx.scatter_add` on CuPy versions without it; remembered per
    namespace (tests stand other namespaces in for CuPy within one process)."""
    if hasattr(cupy.add, "at"):
        function = cupy.add.at
    else:
        import cupyx

        function = cupyx.scatter_add
    _cupy_add_at[id(cupy)] = function
    return function
