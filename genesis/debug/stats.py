"""Summary statistics of a tensor's values and of its gradient, as plain floats.

The figures cover the finite entries; `nan` and `inf` count the others, so a
statistic is always a finite float (or None when no entry is finite) and a
Graph stays strict JSON.

On the CPU the figures of the whole array are taken first and, only when some
entry is NaN or Inf, again over the finite ones. On a GPU every figure is taken
over the finite entries in one pass (`_finite_figures`), so no host decision is
needed in between, and the figures wait on the device: `value_stats_later` and
`grad_stats_later` hand them to a `Readings` and return a dict that is filled
when it fetches (the recorder fetches once per backward call, not once per
tensor). `value_stats` and `grad_stats` fetch at once.

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
from . import _finite_figures as figures
from .readings import Readings

__all__ = ["value_stats", "grad_stats", "value_stats_later", "grad_stats_later"]

# Sums over arrays holding inf and -inf are nan, and say so; the finite part is taken next.
_quietly = np.errstate(invalid="ignore", over="ignore")
_VALUE_FIGURES = (figures.FINITE_MIN, figures.FINITE_MAX, figures.FINITE_SUM,
                  figures.FINITE_ABS_SUM, figures.FINITE_COUNT, figures.NAN_COUNT)
_GRAD_FIGURES = (figures.FINITE_SQUARE_SUM, figures.FINITE_MAX_ABS, figures.FINITE_COUNT,
                 figures.NAN_COUNT, figures.NONZERO_COUNT)


def value_stats(array) -> dict:
    """min, max, mean and mean absolute value of the finite entries; NaN and Inf counts."""
    return _now(value_stats_later, array)


def grad_stats(array) -> dict:
    """L2 norm and largest magnitude of the finite entries, NaN/Inf counts, fraction of zeros."""
    return _now(grad_stats_later, array)


def _now(later, array) -> dict:
    readings = Readings()
    stats = later(array, readings, _device_of(array))
    readings.fetch()
    return stats


def value_stats_later(array, readings: Readings, device) -> dict:
    """`value_stats(array)`, filled now for a NumPy array and at `readings.fetch()` for an
    array on the GPU `device` (the array's genesis device)."""
    return _later(array, readings, device, _host_value_stats, _VALUE_FIGURES, _values_from,
                  _values_of(None, 0, 0))


def grad_stats_later(array, readings: Readings, device) -> dict:
    """`grad_stats(array)`, filled now for a NumPy array and at `readings.fetch()` for an
    array on the GPU `device`."""
    return _later(array, readings, device, _host_grad_stats, _GRAD_FIGURES, _grads_from,
                  {"norm": None, "max_abs": None, "nan": 0, "inf": 0, "zero_fraction": 0.0})


def _later(array, readings: Readings, device, on_host, device_figures, from_figures,
           of_nothing: dict) -> dict:
    """Statistics of `array`: `on_host(array)` for NumPy; for a GPU, a dict that
    `from_figures(size, *values of device_figures)` fills when `readings` fetches."""
    size = array.size
    if size == 0:
        return of_nothing
    xp = device.xp
    array = _comparable(xp, array)
    if xp is np:
        return on_host(array)
    stats = {}
    readings.read(xp, [figure(device, array) for figure in device_figures],
                  lambda found: stats.update(from_figures(size, *found)))
    return stats


def _values_from(size, low, high, total, abs_total, count, nan) -> dict:
    """The value statistics from the finite-entry figures."""
    count, nan = int(count), int(nan)
    found = (low, high, total / count, abs_total / count) if count else None
    return _values_of(found, nan, size - count - nan)


def _grads_from(size, squares, max_abs, count, nan, nonzero) -> dict:
    """The gradient statistics from the finite-entry figures."""
    count, nan = int(count), int(nan)
    return {"norm": math.sqrt(squares) if count else None, "max_abs": max_abs if count else None,
            "nan": nan, "inf": size - count - nan, "zero_fraction": (size - int(nonzero)) / size}


@_quietly
def _host_value_stats(array) -> dict:
    size = array.size
    magnitudes = _magnitudes(array)
    low, high, total, abs_total = _floats(array.min(), array.max(),
                                           array.sum(dtype=np.float64),
                                           magnitudes.sum(dtype=np.float64))
    if _all_finite(low, high, total, abs_total):
        return _values_of((low, high, total / size, abs_total / size), 0, 0)
    finite = np.isfinite(array)
    low, high, total, abs_total, count, nan = _floats(
        np.where(finite, array, np.inf).min(), np.where(finite, array, -np.inf).max(),
        np.where(finite, array, 0).sum(dtype=np.float64),
        np.where(finite, magnitudes, 0).sum(dtype=np.float64),
        np.count_nonzero(finite), np.count_nonzero(np.isnan(array)))
    return _values_from(size, low, high, total, abs_total, count, nan)


@_quietly
def _host_grad_stats(array) -> dict:
    size = array.size
    wide = array.reshape(-1).astype(np.float64, copy=False)
    magnitudes = _magnitudes(array)
    squares, max_abs, nonzero = _floats(np.dot(wide, wide), magnitudes.max(),
                                         np.count_nonzero(array))
    if _all_finite(squares, max_abs):
        return _grads_from(size, squares, max_abs, size, 0, nonzero)
    finite = np.isfinite(array)
    kept = np.where(finite.reshape(-1), wide, 0)
    squares, max_abs, count, nan = _floats(
        np.dot(kept, kept), np.where(finite, magnitudes, -1).max(),
        np.count_nonzero(finite), np.count_nonzero(np.isnan(array)))
    return _grads_from(size, squares, max_abs, count, nan, nonzero)


def _device_of(array):
    """The genesis device an array lives on."""
    from ..device import device

    if namespace_of(array) is np:
        return device("cpu")
    return device(f"cuda:{array.device.id}")


def _values_of(figures, nan: int, inf: int) -> dict:
    low, high, mean, abs_mean = figures if figures is not None else (None,) * 4
    return {"min": low, "max": high, "mean": mean, "abs_mean": abs_mean, "nan": nan, "inf": inf}


def _comparable(xp, array):
    """Arrays NumPy can reduce directly; bfloat16 (an extension dtype) is widened to float32."""
    return array.astype(xp.float32) if array.dtype.kind == "V" else array


def _magnitudes(array):
    return np.abs(array) if array.dtype.kind in "fi" else array


def _floats(*figures) -> list:
    return [float(figure) for figure in figures]


def _all_finite(*figures) -> bool:
    return all(math.isfinite(figure) for figure in figures)
