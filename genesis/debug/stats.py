"""Summary statistics of a tensor's values and of its gradient, as plain floats.

The figures cover the finite entries; `nan` and `inf` count the others, so a
statistic is always a finite float (or None when no entry is finite) and a
Graph stays strict JSON.

>>> import numpy as np
>>> value_stats(np.array([1.0, -3.0, float("nan")]))
{'min': -3.0, 'max': 1.0, 'mean': -1.0, 'abs_mean': 2.0, 'nan': 1, 'inf': 0}
>>> grad_stats(np.array([3.0, 4.0, 0.0]))
{'norm': 5.0, 'max_abs': 4.0, 'nan': 0, 'inf': 0, 'zero_fraction': 0.3333333333333333}
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["value_stats", "grad_stats"]


def value_stats(array) -> dict:
    """min, max, mean and mean absolute value of the finite entries; NaN and Inf counts."""
    finite, nan, inf = _finite_part(array)
    if finite.size == 0:
        return {"min": None, "max": None, "mean": None, "abs_mean": None, "nan": nan, "inf": inf}
    return {"min": float(finite.min()), "max": float(finite.max()),
            "mean": float(finite.mean(dtype=np.float64)),
            "abs_mean": float(abs(finite).mean(dtype=np.float64)), "nan": nan, "inf": inf}


def grad_stats(array) -> dict:
    """L2 norm and largest magnitude of the finite entries, NaN/Inf counts, fraction of zeros."""
    finite, nan, inf = _finite_part(array)
    size = array.size
    if finite.size == 0:
        norm = max_abs = None
    else:
        wide = finite.reshape(-1).astype(np.float64, copy=False)
        norm = math.sqrt(float((wide * wide).sum()))
        max_abs = float(abs(finite).max())
    zeros = size - int(np.count_nonzero(array)) if size else 0
    return {"norm": norm, "max_abs": max_abs, "nan": nan, "inf": inf,
            "zero_fraction": zeros / size if size else 0.0}


def _finite_part(array) -> tuple:
    """The finite entries (the array itself when all are), and the NaN and Inf counts."""
    if array.dtype.kind not in "fc":
        return array, 0, 0
    finite_mask = np.isfinite(array)
    if finite_mask.all():
        return array, 0, 0
    nan = int(np.isnan(array).sum())
    return array[finite_mask], nan, int(array.size - int(finite_mask.sum()) - nan)
