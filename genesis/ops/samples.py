"""Sample-input builders shared by the registry entries of every op family.

They return lists of `Sample`s covering what each op must be checked on:
plain inputs, each operand broadcast, operands that do not require grad,
non-contiguous layouts, 0-d and (where allowed) zero-size tensors.
"""
from __future__ import annotations

import numpy as np

from .registry import Sample


def values(rng: np.random.Generator, shape, low=-2.0, high=2.0) -> np.ndarray:
    """Uniform float64 values in [low, high)."""
    return rng.uniform(low, high, size=shape)


def away_from(rng, shape, points=(0.0,), margin=0.2, low=-2.0, high=2.0) -> np.ndarray:
    """Values kept at least `margin` away from each of `points` (kinks, poles)."""
    array = values(rng, shape, low, high)
    for point in points:
        close = np.abs(array - point) < margin
        array = np.where(close, point + np.copysign(margin * 2, array - point + 1e-12), array)
    return array


def positive(rng, shape, low=0.5, high=2.0) -> np.ndarray:
    """Values in [low, high), for logs, roots and divisors."""
    return rng.uniform(low, high, size=shape)


def unary(make, rng, **kwargs) -> list:
    """Samples for a one-input op; `make(rng, shape)` draws the values."""
    return [
        Sample((make(rng, (3, 4)),), dict(kwargs), note="2-D"),
        Sample((make(rng, (2, 3, 4)),), dict(kwargs), layout="transposed", note="transposed"),
        Sample((make(rng, (2, 5)),), dict(kwargs), layout="strided", note="strided"),
        Sample((make(rng, ()),), dict(kwargs), note="0-d"),
        Sample((make(rng, (0, 3)),), dict(kwargs), note="zero-size"),
    ]


def binary(make_a, make_b, rng, **kwargs) -> list:
    """Samples for a two-input elementwise op: broadcasting both ways, no-grad operands,
    non-contiguous layouts, 0-d operands."""
    return [
        Sample((make_a(rng, (3, 4)), make_b(rng, (3, 4))), dict(kwargs), note="same shape"),
        Sample((make_a(rng, (3, 4)), make_b(rng, (4,))), dict(kwargs), note="broadcast b"),
        Sample((make_a(rng, (3, 1)), make_b(rng, (2, 3, 4))), dict(kwargs), note="broadcast a"),
        Sample((make_a(rng, (3, 4)), make_b(rng, (3, 4))), dict(kwargs), grad=(False, True),
               note="a needs no grad"),
        Sample((make_a(rng, (3, 4)), make_b(rng, (3, 4))), dict(kwargs), grad=(True, False),
               note="b needs no grad"),
        Sample((make_a(rng, (4, 3)), make_b(rng, (4, 3))), dict(kwargs), layout="transposed",
               note="transposed"),
        Sample((make_a(rng, (2, 3)), make_b(rng, (2, 3))), dict(kwargs), layout="strided",
               note="strided"),
        Sample((make_a(rng, ()), make_b(rng, (2, 3))), dict(kwargs), note="0-d a"),
    ]


def with_scalar(make, rng, scalar, **kwargs) -> list:
    """Samples for `op(tensor, scalar)`."""
    return [
        Sample((make(rng, (3, 4)), scalar), dict(kwargs), note=f"scalar {scalar}"),
        Sample((make(rng, (4, 3)), scalar), dict(kwargs), layout="transposed", note="transposed"),
    ]


def scalar_first(make, rng, scalar, **kwargs) -> list:
    """Samples for `op(scalar, tensor)` (reflected operators)."""
    return [Sample((scalar, make(rng, (3, 4))), dict(kwargs), note=f"scalar {scalar} first")]
