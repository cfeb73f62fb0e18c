"""Modified Bessel functions of the first kind, orders 0 and 1, on float64 arrays of any
namespace (NumPy or CuPy): i0, i1 and their exponentially scaled forms i0e, i1e.

Below |x| = 30 the power series Σ (x/2)^(2k+ν) / (k! (k+ν)!), whose terms are all positive
(no cancellation); above, Hankel's asymptotic expansion
e^|x| / sqrt(2π|x|) Σ_k (-1)^k Π_{j<=k} (4ν^2 - (2j-1)^2) / (k! (8|x|)^k), summed while
its terms shrink (they do to below machine precision long before they would grow again).

>>> import numpy as np
>>> i0(np, np.array([0.0, 1.0])).round(8).tolist()
[1.0, 1.26606588]
"""
from __future__ import annotations

import math

_SERIES_LIMIT = 30.0
_EPSILON = 1.11e-16


def _power_series(xp, y, order: int):
    """Σ (y/2)^(2k+order) / (k! (k+order)!) for 0 <= y < 30."""
    quarter_square = y * y / 4
    term = y / 2 if order else xp.ones_like(y)
    total = term
    k = 0
    while True:
        k += 1
        term = term * quarter_square / (k * (k + order))
        total = total + term
        if not (term > _EPSILON * total).any():
            return total


def _asymptotic_scaled(xp, y, order: int):
    """e^-y I_order(y) for y >= 30."""
    mu = 4.0 * order * order
    term = xp.ones_like(y)
    total = term
    for k in range(1, 40):
        term = term * -(mu - (2 * k - 1) ** 2) / (8 * k * y)
        total = total + term
        if not (xp.abs(term) > _EPSILON * xp.abs(total)).any():
            break
    return total / xp.sqrt(2 * math.pi * y)


def _scaled(xp, x, order: int):
    """(e^-|x| I_order(|x|), I_order(|x|) for |x| < 30, and which elements are below 30)."""
    y = xp.abs(x)
    below = y < _SERIES_LIMIT
    series = _power_series(xp, xp.where(below, y, 0.0), order)
    asymptotic = _asymptotic_scaled(xp, xp.where(below, _SERIES_LIMIT, y), order)
    return asymptotic, series, below


def i0(xp, x):
    """I_0(x)."""
    asymptotic, series, below = _scaled(xp, x, 0)
    half = xp.exp(xp.abs(x) / 2)  # e^y as two factors: no overflow before I_0 itself does
    return xp.where(below, series, asymptotic * half * half)


def i0e(xp, x):
    """e^-|x| I_0(x)."""
    asymptotic, series, below = _scaled(xp, x, 0)
    return xp.where(below, series * xp.exp(-xp.abs(x)), asymptotic)


def i1(xp, x):
    """I_1(x) (odd in x)."""
    asymptotic, series, below = _scaled(xp, x, 1)
    half = xp.exp(xp.abs(x) / 2)
    return xp.copysign(xp.where(below, series, asymptotic * half * half), x)


def i1e(xp, x):
    """e^-|x| I_1(x)."""
    asymptotic, series, below = _scaled(xp, x, 1)
    return xp.copysign(xp.where(below, series * xp.exp(-xp.abs(x)), asymptotic), x)
