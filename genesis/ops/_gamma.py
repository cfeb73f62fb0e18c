"""The gamma function's family on float64 arrays of any namespace (NumPy or CuPy; SciPy is not
a dependency): lgamma, digamma, trigamma, the Hurwitz zeta function, polygamma and the
regularized incomplete gamma functions.

lgamma is Cephes' `lgam` (S. L. Moshier): a rational approximation on [2, 3] reached by the
recurrence Γ(x + 1) = x Γ(x), Stirling's series above 13 and the reflection formula below -34.
digamma, trigamma, zeta and polygamma follow PyTorch's CPU kernels step for step (ATen's
Math.h), so their values agree with torch's to rounding; each loop there runs here on all
elements at once, an element leaving the loop where PyTorch's would return. The incomplete
gamma functions use the power series below x = a + 1 and the continued fraction above it
(Numerical Recipes' gser/gcf), both converged to machine precision.

Each function takes float64 arrays and returns float64 arrays; run them under NumPy's
errstate(all="ignore") (poles give inf and nan as in PyTorch).

>>> import numpy as np
>>> with np.errstate(all="ignore"):
...     lgamma(np, np.array([1.0, 0.5, -1.0])).round(6).tolist()
[0.0, 0.572365, inf]
"""
from __future__ import annotations

import math
from fractions import Fraction

_LOG_PI = 1.14472988584940017414
_LOG_SQRT_2PI = 0.91893853320467274178
_MAX_LGAMMA = 2.556348e305
_MACHEP = 1.11022302462515654042e-16
# Stirling's series for lgamma (highest power of 1 / x^2 first), and the rational function
# x B(x) / C(x) giving lgamma(2 + x) on [0, 1) (Cephes' lgam).
_STIRLING = (8.11614167470508450300e-4, -5.95061904284301438324e-4, 7.93650340457716943945e-4,
             -2.77777777730099687205e-3, 8.33333333333331927722e-2)
_B = (-1.37825152569120859100e3, -3.88016315134637840924e4, -3.31612992738871184744e5,
      -1.16237097492762307383e6, -1.72173700820839662146e6, -8.53555664245765465627e5)
_C = (1.0, -3.51815701436523470549e2, -1.70642106651881159223e4, -2.20528590553854454839e5,
      -1.13933444367982507207e6, -2.53252307177582951285e6, -2.01889141433532773231e6)


def _bernoulli(count: int) -> list:
    """The Bernoulli numbers B_0 ... B_count as exact fractions (Akiyama-Tanigawa)."""
    numbers, row = [], [Fraction(0)] * (count + 1)
    for m in range(count + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    return numbers


_BERNOULLI = _bernoulli(24)
# digamma's asymptotic series: B_2k / (2k) in 1 / x^2, highest power first (PyTorch's A[])
_DIGAMMA = tuple(float(_BERNOULLI[2 * k] / (2 * k)) for k in range(7, 0, -1))
_PSI_10 = 2.25175258906672110764
# zeta's Euler-Maclaurin terms: (2k)! / B_2k, k = 1 ... 12
_ZETA = tuple(float(math.factorial(2 * k) / _BERNOULLI[2 * k]) for k in range(1, 13))


def polynomial(coefficients: tuple, x):
    """Horner's rule, highest power first."""
    result = coefficients[0] + 0 * x
    for coefficient in coefficients[1:]:
        result = result * x + coefficient
    return result


def _is_pole(xp, x):
    """The non-positive integers (and -inf)."""
    return (x <= 0) & (x == xp.floor(x))


def lgamma(xp, x):
    """log |Γ(x)|; inf at the non-positive integers and at ±inf. Each range is computed on its
    own elements only."""
    result = xp.full_like(x, math.inf)
    high = x >= 13
    result[high] = _lgamma_stirling(xp, x[high])
    middle = (x >= -34) & (x < 13) & (xp.abs(x) >= 1e-200) & ~_is_pole(xp, x)
    result[middle] = _lgamma_recurrence(xp, x[middle])
    low = (x < -34) & ~_is_pole(xp, x)
    q = -x[low]
    floor = xp.floor(q)
    z = q - floor
    z = xp.where(z > 0.5, floor + 1 - q, z)
    result[low] = _LOG_PI - xp.log(q * xp.sin(math.pi * z)) - _lgamma_stirling(xp, q)
    tiny = (xp.abs(x) < 1e-200) & (x != 0)  # lgamma(x) = -log|x| - γ x + O(x^2)
    result[tiny] = -xp.log(xp.abs(x[tiny]))
    return xp.where(xp.isnan(x), x, result)


def _lgamma_stirling(xp, x):
    """lgamma for x >= 13."""
    q = (x - 0.5) * xp.log(x) - x + _LOG_SQRT_2PI
    p = 1 / (x * x)
    series = xp.where(x >= 1000, ((7.9365079365079365079365e-4 * p - 2.7777777777777777777778e-3)
                                  * p + 0.0833333333333333333333) / x,
                      polynomial(_STIRLING, p) / x)
    q = xp.where(x > 1e8, q, q + series)
    return xp.where(x > _MAX_LGAMMA, math.inf, q)


def _lgamma_recurrence(xp, x):
    """lgamma for -34 <= x < 13, x not a pole: shifted into [2, 3) by the recurrence."""
    z = xp.ones_like(x)
    shift = xp.zeros_like(x)
    u = x
    while u.size:  # down: Γ(u + 1) = u Γ(u)
        down = u >= 3
        if not down.any():
            break
        shift = shift - down
        u = x + shift
        z = xp.where(down, z * u, z)
    while u.size:  # up
        up = u < 2
        if not up.any():
            break
        z = xp.where(up, z / u, z)
        shift = shift + up
        u = x + shift
    w = x + (shift - 2)
    rational = w * polynomial(_B, w) / polynomial(_C, w)
    return xp.log(xp.abs(z)) + xp.where(u == 2, 0.0, rational)


def digamma(xp, x):
    """ψ(x) = d/dx lgamma(x): ∓inf at ±0, nan at the negative integers (PyTorch's rules)."""
    negative = x < 0
    fraction = x - xp.trunc(xp.where(xp.isinf(x), 0.0, x))
    y = xp.where(negative, 1 - x, x)
    result = xp.zeros_like(x)
    while True:
        small = y < 10
        if not small.any():
            break
        result = xp.where(small, result - 1 / xp.where(small, y, 1.0), result)
        y = xp.where(small, y + 1, y)
    z = 1 / (y * y)
    series = xp.where(y < 1e17, z * polynomial(_DIGAMMA, z), 0.0)
    result = xp.where(y == 10, result + _PSI_10, result + xp.log(y) - 0.5 / y - series)
    result = xp.where(negative, result - math.pi / xp.tan(math.pi * fraction), result)
    result = xp.where(negative & (x == xp.floor(x)), math.nan, result)
    return xp.where(x == 0, xp.copysign(math.inf, -x), result)


def trigamma(xp, x):
    """ψ'(x), by PyTorch's formula: reflection below 1/2, six recurrence steps, then the
    asymptotic series."""
    reflect = x < 0.5
    sine = xp.sin(math.pi * x)
    result = xp.where(reflect, -(math.pi * math.pi) / (sine * sine), 0.0)
    y = xp.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    inverse_square = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + inverse_square * (
        1 / 6 - inverse_square * (1 / 30 - inverse_square * (1 / 42)))) / y
    return xp.where(reflect, -result, result)


def zeta(xp, x, q):
    """The Hurwitz zeta function Σ_k (k + q)^-x (x > 1), PyTorch's Cephes-derived kernel."""
    x, q = xp.broadcast_arrays(xp.asarray(x, dtype="float64"), xp.asarray(q, dtype="float64"))
    result = xp.full(x.shape, math.nan)
    q_pole = (q <= 0) & (q == xp.floor(q))
    result = xp.where(q_pole, math.inf, result)
    invalid = (x < 1) | ((q <= 0) & ~q_pole & (x != xp.floor(x))) | xp.isnan(x) | xp.isnan(q)
    result = xp.where(x == 1, math.inf, xp.where(invalid, math.nan, result))
    active = ~(q_pole | invalid | (x == 1))
    s = xp.where(active, xp.power(xp.where(active, q, 1.0), -x), 0.0)
    a, b, steps = q, xp.zeros_like(q), 0
    while True:  # direct summation until the terms are small or the base passes 9
        summing = active & ((steps < 9) | (a <= 9))
        if not summing.any():
            break
        steps += 1
        a = xp.where(summing, a + 1, a)
        b = xp.where(summing, xp.power(a, -x), b)
        s = xp.where(summing, s + b, s)
        converged = summing & (-_MACHEP * s < b) & (b < _MACHEP * s)
        result = xp.where(converged, s, result)
        active = active & ~converged
    w = a  # Euler-Maclaurin tail from w
    s = s + b * w / (x - 1) - 0.5 * b
    factor, k = xp.ones_like(s), 0.0
    for term_divisor in _ZETA:
        factor = factor * (x + k)
        b = b / w
        term = factor * b / term_divisor
        s = xp.where(active, s + term, s)
        converged = active & (xp.abs(term / s) < _MACHEP)
        result = xp.where(converged, s, result)
        active = active & ~converged
        k += 1
        factor = factor * (x + k)
        b = b / w
        k += 1
    return xp.where(active, s, result)


def polygamma(xp, n: int, x):
    """The n-th derivative of digamma (n >= 0)."""
    if n == 0:
        return digamma(xp, x)
    if n == 1:
        return trigamma(xp, x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * zeta(xp, float(n + 1), x)


def igamma(xp, a, x):
    """The regularized lower incomplete gamma function P(a, x) = γ(a, x) / Γ(a)."""
    return _incomplete_gamma(xp, a, x)[0]


def igammac(xp, a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma(xp, a, x)[1]


def _incomplete_gamma(xp, a, x):
    """(P(a, x), Q(a, x)); P(a, 0) = 0, Q(a, inf) = 0, nan for a < 0 or x < 0 (PyTorch's
    edge values: a = 0 gives P = 1 for x > 0)."""
    a, x = xp.broadcast_arrays(xp.asarray(a, dtype="float64"), xp.asarray(x, dtype="float64"))
    usable = (a > 0) & (x > 0) & xp.isfinite(x) & xp.isfinite(a)
    safe_a, safe_x = xp.where(usable, a, 1.0), xp.where(usable, x, 1.0)
    log_prefactor = safe_a * xp.log(safe_x) - safe_x - lgamma(xp, safe_a)
    series = safe_x < safe_a + 1
    # the power series: P = x^a e^-x / Γ(a + 1) Σ x^k / ((a + 1) ... (a + k))
    term = xp.ones_like(safe_a) / safe_a
    total = term.copy()
    denominator = safe_a.copy()
    pending = usable & series
    while pending.any():
        denominator = denominator + 1
        term = xp.where(pending, term * safe_x / denominator, term)
        total = xp.where(pending, total + term, total)
        pending = pending & (xp.abs(term) > xp.abs(total) * _MACHEP)
    p_series = total * xp.exp(log_prefactor)
    # the continued fraction (modified Lentz): Q = x^a e^-x / Γ(a) / (x + 1 - a - ...)
    tiny = 1e-300
    b = safe_x + 1 - safe_a
    c = xp.full_like(b, 1 / tiny)
    d = 1 / xp.where(b == 0, tiny, b)
    h = d.copy()
    pending = usable & ~series
    i = 0
    while pending.any():
        i += 1
        an = -i * (i - safe_a)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        delta = d * c
        h = xp.where(pending, h * delta, h)
        pending = pending & (xp.abs(delta - 1) > _MACHEP)
    q_fraction = xp.exp(log_prefactor) * h
    lower = xp.where(series, p_series, 1 - q_fraction)
    upper = xp.where(series, 1 - p_series, q_fraction)
    # edges: x = 0 gives P = 0; x = inf gives P = 1; a = 0 (with x > 0) gives P = 1
    lower = xp.where(x == 0, 0.0, xp.where(xp.isposinf(x) | ((a == 0) & (x > 0)), 1.0, lower))
    upper = xp.where(x == 0, 1.0, xp.where(xp.isposinf(x) | ((a == 0) & (x > 0)), 0.0, upper))
    invalid = (a < 0) | (x < 0) | xp.isnan(a) | xp.isnan(x) | ((a == 0) & (x == 0))
    return xp.where(invalid, math.nan, lower), xp.where(invalid, math.nan, upper)
