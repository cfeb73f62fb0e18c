"""Unbuffered scatter-add, the one place that knows NumPy and CuPy spell it differently.

`target[index] += values` adds only once per repeated index; gradients of
indexing need every repeat to count, which NumPy does with `np.add.at` and
CuPy with `cupyx.scatter_add`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["add_at"]


def add_at(xp, target, index, values) -> None:
    """Add `values` into `target` at `index` in place, repeated indices accumulating.

    >>> import numpy as np
    >>> target = np.zeros(3)
    >>> add_at(np, target, np.array([0, 2, 2]), np.ones(3))
    >>> target
    array([1., 0., 2.])
    """
    if xp is np:
        np.add.at(target, index, values)
    else:
        import cupyx

        cupyx.scatter_add(target, index, values)
