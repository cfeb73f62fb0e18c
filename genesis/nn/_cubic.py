"""The cubic convolution kernel (Keys, a = -0.75, as PyTorch) behind bicubic sampling:
`grid_sample(mode="bicubic")` and `interpolate(mode="bicubic")`.

>>> [float(w) for w in cubic_coefficients(0.0)]
[0.0, 1.0, 0.0, 0.0]
>>> round(sum(cubic_coefficients(0.3)), 12)  # the weights sum to 1
1.0
"""
from __future__ import annotations

__all__ = ["CUBIC_A", "cubic_coefficients"]

CUBIC_A = -0.75


def cubic_coefficients(t) -> list:
    """The four weights of the taps at -1, 0, 1, 2 for fraction `t` (a number, an array or
    a Tensor: the arithmetic is the same)."""
    a = CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]
