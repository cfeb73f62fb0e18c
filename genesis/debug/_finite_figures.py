"""The figures `genesis.debug` takes of an array on a GPU: each one pass over the array,
each a float64 0-d array that stays on the device until the host reads it.

Each figure covers the finite entries only (or counts them), so one set of passes
gives the statistics whether or not the array holds NaN or Inf, without first asking
the host which case it is. On a GPU each is one fused reduction (a CuPy
ReductionKernel, accumulating in double); elsewhere, and for dtypes the kernels are
not built for, the reference's array calls.

>>> import numpy as np, genesis
>>> cpu = genesis.device("cpu")
>>> x = np.array([1.0, -3.0, np.nan, np.inf])
>>> [float(figure(cpu, x)) for figure in (FINITE_MIN, FINITE_SUM, FINITE_COUNT, NAN_COUNT)]
[-3.0, -2.0, 2.0, 1.0]
"""
from __future__ import annotations

import math

import numpy as np

from ..ops._kernels import Reduction

__all__ = ["FINITE_MIN", "FINITE_MAX", "FINITE_SUM", "FINITE_ABS_SUM", "FINITE_SQUARE_SUM",
           "FINITE_MAX_ABS", "SQUARE_SUM", "FINITE_COUNT", "NAN_COUNT", "NONZERO_COUNT", "NONE_FINITE",
           "dot_with_itself"]

# What FINITE_MIN and FINITE_MAX give when no entry is finite (and FINITE_MAX_ABS: -1).
NONE_FINITE = 1.7976931348623157e308
_WHOLE = {"axis": None, "keepdims": False}


def _figure(name: str, map_expr: str, reduce_expr: str, identity: str, mapped, reference=None):
    """A float64 reduction of all of x's entries, called as figure(device, x); `mapped(xp,
    wide)` is the reference's map of x widened to float64 (or give the whole `reference`)."""
    combine = {"a + b": "sum", "fmin(a, b)": "min", "fmax(a, b)": "max"}[reduce_expr]

    def mapped_and_combined(device, x, **options):
        xp = device.xp
        values = mapped(xp, x.reshape(-1).astype(xp.float64))
        if combine == "sum":
            return values.sum(dtype=xp.float64, **options)
        return getattr(values, combine)(**options)

    kernel = Reduction(f"genesis_{name}", "T x", "float64 figure", map_expr, reduce_expr,
                       "figure = a", identity, reference or mapped_and_combined)

    def figure(device, x):
        return kernel(device, x, **_WHOLE)
    figure.kernel = kernel
    return figure


def dot_with_itself(xp, x):
    """The sum of squares of `x`'s entries in float64. A NumPy float32 array is summed by
    float32 dot products of chunks of `_CHUNK` entries added in float64 (BLAS keeps several
    partial sums: within 1e-6 relative for these sizes, without a widened copy: 8x faster);
    a sum past float32's range is done again widened, so only NaN/Inf entries make it
    non-finite."""
    flat = x.reshape(-1)
    if xp is np and flat.dtype == np.float32:
        total = 0.0
        for start in range(0, flat.size, _CHUNK):
            chunk = flat[start:start + _CHUNK]
            total += float(chunk.dot(chunk))
        if math.isfinite(total):
            return np.float64(total)
    wide = flat.astype(xp.float64)
    return xp.dot(wide, wide)


_CHUNK = 1 << 16


def _finite_or(xp, x, value, other):
    """`value` where x is finite, else `other`."""
    return xp.where(xp.isfinite(x), value, other)


_BIG = repr(NONE_FINITE)
FINITE_MIN = _figure("finite_min", f"isfinite(x) ? (double) x : {_BIG}", "fmin(a, b)", _BIG,
                     lambda xp, x: _finite_or(xp, x, x, NONE_FINITE))
FINITE_MAX = _figure("finite_max", f"isfinite(x) ? (double) x : -{_BIG}", "fmax(a, b)",
                     f"-{_BIG}", lambda xp, x: _finite_or(xp, x, x, -NONE_FINITE))
FINITE_SUM = _figure("finite_sum", "isfinite(x) ? (double) x : 0.0", "a + b", "0",
                     lambda xp, x: _finite_or(xp, x, x, 0))
FINITE_ABS_SUM = _figure("finite_abs_sum", "isfinite(x) ? fabs((double) x) : 0.0", "a + b", "0",
                         lambda xp, x: _finite_or(xp, x, xp.abs(x), 0))
FINITE_SQUARE_SUM = _figure(
    "finite_square_sum", "isfinite(x) ? (double) x * (double) x : 0.0", "a + b", "0",
    lambda xp, x: _finite_or(xp, x, x * x, 0))
FINITE_MAX_ABS = _figure("finite_max_abs", "isfinite(x) ? fabs((double) x) : -1.0", "fmax(a, b)",
                         "-1", lambda xp, x: _finite_or(xp, x, xp.abs(x), -1))
SQUARE_SUM = _figure("square_sum", "(double) x * (double) x", "a + b", "0",  # NaN/Inf stay
                     None, reference=lambda device, x, **options: dot_with_itself(device.xp, x))
FINITE_COUNT = _figure("finite_count", "isfinite(x) ? 1.0 : 0.0", "a + b", "0",
                       lambda xp, x: xp.isfinite(x))
NAN_COUNT = _figure("nan_count", "isnan(x) ? 1.0 : 0.0", "a + b", "0", lambda xp, x: xp.isnan(x))
NONZERO_COUNT = _figure("nonzero_count", "x != T(0) ? 1.0 : 0.0", "a + b", "0",
                        lambda xp, x: x != 0)
