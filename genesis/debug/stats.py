"""Summary statistics of a tensor's values and of its gradient, as plain floats.

The figures cover the finite entries; `nan` and `inf` count the others, so a
statistic is always a finite float (or None when no entry is finite) and a
Graph stays strict JSON.

The reductions run in the array's own namespace (on the GPU for a CuPy array)
and their results travel to the host together, as one small float64 array:
one transfer per call when every entry is finite (the figures of the whole
array are then those of its finite part), a second one only when some entry
is NaN or Inf and the figures must be taken again over the finite entries.

>>> import numpy as np
>>> value_stats(np.array([1.0, -3.0, float("nan")]))
{'min': -3.0, 'max': 1.0, 'mean': -1.0, 'abs_mean': 2.0, 'nan': 1, 'inf': 0}
>>> grad_stats(np.array([3.0, 4.0, 0.0]))
{'norm': 5.0, 'max_abs': 4.0, 'nan': 0, 'inf': 0, 'zero_fraction': 0.3333333333333333}
"""
from __future__ import annotations

import math

import numpy as np

from ..device import namespace_of

__all__ = ["value_stats", "grad_stats"]

# Sums over arrays holding inf and -inf are nan, and say so; the finite part is taken next.
_quietly = np.errstate(invalid="ignore", over="ignore")


@_quietly
def value_stats(array) -> dict:
    """min, max, mean and mean absolute value of the finite entries; NaN and Inf counts."""
    size = array.size
    if size == 0:
        return _values_of(None, 0, 0)
    xp = namespace_of(array)
    array = _comparable(xp, array)
    magnitudes = _magnitudes(xp, array)
    low, high, total, abs_total = _to_host(xp, array.min(), array.max(),
                                           array.sum(dtype=xp.float64),
                                           magnitudes.sum(dtype=xp.float64))
    if _all_finite(low, high, total, abs_total):
        return _values_of((low, high, total / size, abs_total / size), 0, 0)
    finite = xp.isfinite(array)
    low, high, total, abs_total, count, nan = _to_host(
        xp, xp.where(finite, array, xp.inf).min(), xp.where(finite, array, -xp.inf).max(),
        xp.where(finite, array, 0).sum(dtype=xp.float64),
        xp.where(finite, magnitudes, 0).sum(dtype=xp.float64),
        xp.count_nonzero(finite), xp.count_nonzero(xp.isnan(array)))
    count, nan = int(count), int(nan)
    figures = (low, high, total / count, abs_total / count) if count else None
    return _values_of(figures, nan, size - count - nan)


@_quietly
def grad_stats(array) -> dict:
    """L2 norm and largest magnitude of the finite entries, NaN/Inf counts, fraction of zeros."""
    size = array.size
    if size == 0:
        return {"norm": None, "max_abs": None, "nan": 0, "inf": 0, "zero_fraction": 0.0}
    xp = namespace_of(array)
    array = _comparable(xp, array)
    wide = array.reshape(-1).astype(xp.float64, copy=False)
    magnitudes = _magnitudes(xp, array)
    squares, max_abs, nonzero = _to_host(xp, xp.dot(wide, wide), magnitudes.max(),
                                         xp.count_nonzero(array))
    nan = inf = 0
    if not _all_finite(squares, max_abs):
        finite = xp.isfinite(array)
        kept = xp.where(finite.reshape(-1), wide, 0)
        squares, max_abs, count, nan = _to_host(
            xp, xp.dot(kept, kept), xp.where(finite, magnitudes, -1).max(),
            xp.count_nonzero(finite), xp.count_nonzero(xp.isnan(array)))
        nan, count = int(nan), int(count)
        inf = size - count - nan
        if not count:
            squares = max_abs = None
    return {"norm": math.sqrt(squares) if squares is not None else None,
            "max_abs": max_abs, "nan": nan, "inf": inf,
            "zero_fraction": (size - int(nonzero)) / size}


def _values_of(figures, nan: int, inf: int) -> dict:
    low, high, mean, abs_mean = figures if figures is not None else (None,) * 4
    return {"min": low, "max": high, "mean": mean, "abs_mean": abs_mean, "nan": nan, "inf": inf}


def _comparable(xp, array):
    """Arrays NumPy can reduce directly; bfloat16 (an extension dtype) is widened to float32."""
    return array.astype(xp.float32) if array.dtype.kind == "V" else array


def _magnitudes(xp, array):
    return xp.abs(array) if array.dtype.kind in "fi" else array


def _to_host(xp, *figures) -> list:
    """Device scalars as Python floats, in one transfer."""
    return xp.stack([xp.asarray(figure, dtype=xp.float64) for figure in figures]).tolist()


def _all_finite(*figures) -> bool:
    return all(math.isfinite(figure) for figure in figures)
