"""Checks for the numeric options of a gradient check (--eps, --atol, --rtol), as Typer
callbacks: a value outside the range is a usage error (exit status 2) naming the option and
the range, instead of a check that compares NaN.

>>> step(1e-6), tolerance(0.0), tolerance(None)
(1e-06, 0.0, None)
>>> try:
...     step(0.0)
... except typer.BadParameter as error:
...     print(error)
must be a finite number > 0 (the finite-difference step, like 1e-6)
"""
from __future__ import annotations

import math

import typer

__all__ = ["step", "tolerance"]


def step(value: float) -> float:
    """--eps: finite and above 0 (a step of 0 divides by 0; NaN or inf moves to nowhere)."""
    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter("must be a finite number > 0 (the finite-difference step, like 1e-6)")
    return value


def tolerance(value: float | None) -> float | None:
    """--atol, --rtol: finite and at least 0 (None: the default)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter("must be a finite number >= 0")
    return value
