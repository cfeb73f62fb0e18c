"""The complementary and inverse error functions on float64 arrays of any namespace (NumPy or
CuPy): erfc, erfcx, erfinv, erfcinv, and the normal distribution's ndtri and log_ndtr.

erfc and erfcx reuse W. J. Cody's rational approximations (genesis/ops/_erf.py), which
compute erfc(x) exp(x^2) directly: erfc keeps its full relative accuracy far in the tail, where
1 - erf(x) would be 0. erfinv starts from the rational approximation PyTorch uses (after
G. L. Pavlis) and refines it by Newton's method: on erf in the centre, and on log erfc in the
tails (|y| > 0.7), where erf(x) - y would lose the digits that matter.

Run them under NumPy's errstate(all="ignore").

>>> import numpy as np
>>> erfinv(np, np.array([0.0, 0.5])).round(8).tolist()
[0.0, 0.47693628]
"""
from __future__ import annotations

import math

from ._erf import _HUGE, _SMALL, _ratio_large, _ratio_medium, _ratio_small, erf_array

_MEDIUM = 4.0
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2 = math.sqrt(2.0)
# Pavlis' initial approximation (PyTorch's calc_erfinv): centre |y| <= 0.7, tail beyond.
_CENTRAL = 0.7
_A = (-0.140543331, 0.914624893, -1.645349621, 0.886226899)
_B = (0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0)
_C = (1.641345311, 3.429567803, -1.624906493, -1.970840454)
_D = (1.637067800, 3.543889200, 1.0)


def _horner(coefficients: tuple, x):
    result = coefficients[0] + 0 * x
    for coefficient in coefficients[1:]:
        result = result * x + coefficient
    return result


def _scaled_erfc(xp, y):
    """erfc(y) exp(y^2) for y >= 0.46875 (Cody's middle and large ranges)."""
    medium = _ratio_medium(xp.clip(y, _SMALL, _MEDIUM))
    return xp.where(y <= _MEDIUM, medium, _ratio_large(xp.maximum(y, _MEDIUM)))


def erfc(xp, x):
    """1 - erf(x), accurate where it is tiny (large x)."""
    y = xp.abs(x)
    small = 1 - x * _ratio_small(xp.minimum(y, _SMALL))
    z = xp.clip(y, _SMALL, _HUGE)
    rounded = xp.trunc(z * 16) / 16  # exp(-z^2) in two factors: less rounding error
    tail = xp.exp(-rounded * rounded) * xp.exp(-(z - rounded) * (z + rounded)) * _scaled_erfc(xp, z)
    tail = xp.where(x < 0, 2 - tail, tail)
    return xp.where(y <= _SMALL, small, tail)


def erfcx(xp, x):
    """exp(x^2) erfc(x), the scaled complementary error function (finite for large x)."""
    y = xp.abs(x)
    small_y = xp.minimum(y, _SMALL)
    small = xp.exp(small_y * small_y) * (1 - xp.where(y <= _SMALL, x, 0.0) * _ratio_small(small_y))
    positive = _scaled_erfc(xp, xp.maximum(y, _SMALL))
    # erfcx(-y) = 2 exp(y^2) - erfcx(y); exp(y^2) overflows to inf beyond y ~ 26.6
    square = xp.where(y < 27, y * y, 729.0)
    negative = xp.where(y < 27, 2 * xp.exp(square) - positive, math.inf)
    return xp.where(y <= _SMALL, small, xp.where(x < 0, negative, positive))


def erfcinv(xp, q):
    """The t with erfc(t) = q, for 0 < q <= 1 (inf at 0): Newton's method on log erfc, from
    Pavlis' tail approximation (relative error below 1e-3 down to q = 1e-320; four steps
    reach rounding)."""
    usable = (q > 0) & (q <= 1)
    safe = xp.where(usable, q, 0.5)
    z = xp.sqrt(-xp.log(safe / 2))
    t = _horner(_C, z) / _horner(_D, z)
    log_q = xp.log(safe)
    for _ in range(4):
        scaled = erfcx(xp, t)
        # f(t) = log erfc(t) - log q, f'(t) = -2 / (sqrt(pi) erfcx(t))
        t = t + (xp.log(scaled) - t * t - log_q) * (_SQRT_PI / 2) * scaled
    t = xp.where(q == 0, math.inf, t)
    return xp.where(usable | (q == 0), t, math.nan)


def erfinv(xp, y):
    """The x with erf(x) = y, for -1 <= y <= 1 (±inf at ±1, nan outside). The centre and the
    tails are each computed on their own elements only."""
    magnitude = xp.abs(y)
    central = magnitude <= _CENTRAL
    result = xp.empty_like(y)
    centre = y[central]
    square = centre * centre
    x = centre * _horner(_A, square) / _horner(_B, square)
    for _ in range(2):
        x = x - (erf_array(xp, x) - centre) / ((2 / _SQRT_PI) * xp.exp(-x * x))
    result[central] = x
    tail = ~central
    outer = y[tail]
    result[tail] = xp.where(xp.abs(outer) <= 1,
                            xp.copysign(erfcinv(xp, 1 - xp.abs(outer)), outer), math.nan)
    return result
def ndtri(xp, p):
    """The quantile function of the standard normal distribution (-inf at 0, inf at 1)."""
    central = (p >= 0.25) & (p <= 0.75)
    middle = _SQRT_2 * erfinv(xp, xp.where(central, 2 * p - 1, 0.0))
    lower = p < 0.5
    tail = _SQRT_2 * erfcinv(xp, xp.where(lower, 2 * p, 2 * (1 - p)))
    tail = xp.where(lower, -tail, tail)
    result = xp.where(central, middle, tail)
    return xp.where((p < 0) | (p > 1) | xp.isnan(p), math.nan, result)


def log_ndtr(xp, x):
    """log of the standard normal distribution function, accurate far in the left tail."""
    t = x / _SQRT_2
    left = x < -1
    scaled = erfcx(xp, xp.where(left, -t, 1.0))
    right = xp.log1p(-erfc(xp, xp.where(left, 0.0, t)) / 2)
    return xp.where(left, xp.log(scaled / 2) - t * t, right)
