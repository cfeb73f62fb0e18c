"""The simple shape of a difference between two arrays, in words, when every entry fits it.

Shared by `genesis compare` (A against B) and the per-node gradient check (the backward's
analytical gradient against the numerical one): one is zero everywhere, one is a constant
factor times the other (a sign flip included), one is the transpose of the other. It says
nothing unless every entry agrees with the explanation within the tolerances: never a
guess.

>>> import numpy as np
>>> explain_difference(np.array([1., 2.]), np.array([2., 4.]), 1e-7, 1e-7)
'A = 0.5 x B at every entry (a constant factor: a missing factor 2?)'
>>> explain_difference(np.array([-1., 2.]), np.array([1., -2.]), 1e-7, 1e-7,
...                    names=("analytical", "numerical"), entries="checked element")
'analytical = -numerical at every checked element (the sign is wrong)'
>>> explain_difference(np.array([-1., -2.]), np.array([4., 8.]), 1e-7, 1e-7)
'A = -0.25 x B at every entry (a constant factor: a missing factor 4? and the sign is wrong)'
>>> explain_difference(np.array([1., 2.]), np.array([1., 5.]), 1e-7, 1e-7)
''
"""
from __future__ import annotations

import numpy as np

__all__ = ["explain_difference"]


def explain_difference(a: np.ndarray, b: np.ndarray, atol: float, rtol: float,
                       names: tuple = ("A", "B"), entries: str = "entry") -> str:
    """Words for how `a` differs from `b` (named `names`), or "" when no simple explanation
    holds for every one of the `entries`."""
    first, second = names
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)

    def close(x, y):
        return bool(np.all(np.abs(x - y) <= atol + rtol * np.maximum(np.abs(x), np.abs(y))))

    if a.shape != b.shape or a.size == 0 or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return ""
    every = f"at every {entries}"
    zero_a, zero_b = close(a, 0 * a), close(b, 0 * b)
    if zero_a and not zero_b:
        return f"{first} is zero {every}, {second} is not"
    if zero_b and not zero_a:
        return f"{second} is zero {every}, {first} is not"
    if a.ndim == 2 and a.shape[0] == a.shape[1] > 1 and close(a, b.T) and not close(a, b):
        return f"{first} is the transpose of {second}"
    pivot = int(np.argmax(np.abs(b)))
    if b.flat[pivot] == 0:
        return ""
    factor = a.flat[pivot] / b.flat[pivot]
    if not close(a, factor * b):
        return ""
    if abs(factor + 1) <= 1e-9:
        return f"{first} = -{second} {every} (the sign is wrong)"
    words = f"{first} = {factor:.4g} x {second} {every}"
    sign = " and the sign is wrong" if factor < 0 else ""
    inverse = 1 / factor
    if abs(inverse - round(inverse)) < 1e-6 * abs(inverse) and abs(round(inverse)) > 1:
        return words + f" (a constant factor: a missing factor {abs(round(inverse))}?{sign})"
    if abs(factor - round(factor)) < 1e-6 * max(1.0, abs(factor)) and abs(round(factor)) > 1:
        return words + f" (a constant factor: an extra factor {abs(round(factor))}?{sign})"
    return words + f" (a constant factor{sign})"
