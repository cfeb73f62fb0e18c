"""Telling a kink from a wrong gradient.

At a kink (relu or abs at 0, max with ties) the function has no derivative: its one-sided
slopes differ, and any value between them is a valid sub-gradient for a backward to give.
Central differences land half-way, so a right backward there looks wrong. `on_a_kink` is
the rule, shared by `gradcheck` and the per-node checks of `genesis trace`
(`genesis.debug.rebuilt_call`); `kink_entries` applies it to the entries of one Jacobian
that gradcheck found out of tolerance.

>>> import numpy as np
>>> on_a_kink(np.array([0.0, 1.0, 3.0]), np.array([1.0, 1.0, 1.0]),
...           np.array([0.0, 0.0, 0.0]), 1e-5).tolist()   # relu at 0: slopes 1 and 0
[True, True, False]
"""
from __future__ import annotations

import numpy as np

from .gradcheck_jacobians import moved_outputs

__all__ = ["on_a_kink", "kink_entries"]


def on_a_kink(analytical, forward_slope, backward_slope, tolerance):
    """Whether the one-sided slopes differ by more than `tolerance` and `analytical` lies
    between them (within `tolerance`): a sub-gradient at a kink. Elementwise on arrays."""
    low, high = np.minimum(forward_slope, backward_slope), np.maximum(forward_slope, backward_slope)
    return (high - low > tolerance) & (low - tolerance <= analytical) & (analytical <= high + tolerance)


def kink_entries(problem, i: int, j: int, analytical: np.ndarray, failing: np.ndarray,
                 tol) -> np.ndarray:
    """Which of the `failing` entries of the Jacobian of output i w.r.t. input j sit on a
    kink: each failing column's input element is moved by ±eps on its own, and the
    one-sided slopes are judged with `on_a_kink` (tolerance atol + rtol * the larger slope)."""
    on_kink = np.zeros_like(failing)
    base = problem.evaluate()[i]
    data = problem.numeric_inputs[j]._data
    for column in np.flatnonzero(failing.any(axis=0)):
        position = np.unravel_index(column, data.shape)
        plus = moved_outputs(problem.evaluate, data, position, tol.eps)[i]
        minus = moved_outputs(problem.evaluate, data, position, -tol.eps)[i]
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: no kink, a NaN
            forward, backward = (plus - base) / tol.eps, (base - minus) / tol.eps
        rows = failing[:, column]
        tolerance = tol.atol + tol.rtol * np.maximum(np.abs(forward[rows]), np.abs(backward[rows]))
        on_kink[rows, column] = on_a_kink(analytical[rows, column], forward[rows],
                                          backward[rows], tolerance)
    return on_kink
