"""The larger or smaller of two inputs, elementwise: maximum, minimum, fmax, fmin.

The gradient goes to the input that was chosen; at a tie each input gets half of it (PyTorch's
convention); maximum/minimum propagate nan, fmax/fmin ignore it.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import cast_to, result_type
from .registry import OpInfo, Sample
from .where import gate_off, where

__all__ = ["maximum", "minimum", "fmax", "fmin"]


class _Extremum(Op):
    """The larger (`larger`) or smaller of a and b by `ufunc`; where one wins it gets the
    gradient, a tie splits it evenly. A nan wins (maximum/minimum) unless `nan_loses`
    (fmax/fmin: the other value wins)."""

    ufunc, larger, nan_loses = "", True, False

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _extremum(a, b, type(ctx)._forward_cls.ufunc)

    @staticmethod
    def backward(ctx, grad):
        kind = type(ctx)._forward_cls
        x, y = _saved_values(ctx, grad)
        a_loses, b_loses = (x < y, x > y) if kind.larger else (x > y, x < y)
        if kind.nan_loses:
            x_nan, y_nan = _isnan(x, grad), _isnan(y, grad)
            a_loses, b_loses = a_loses | (x_nan & ~y_nan), b_loses | (y_nan & ~x_nan)
        return _extremum_grads(ctx, grad, x, y, a_loses, b_loses)


class Maximum(_Extremum):
    """The larger of a and b (nan if either is nan); a tie splits the gradient evenly."""

    ufunc = "maximum"


class Minimum(_Extremum):
    """The smaller of a and b (nan if either is nan); a tie splits the gradient evenly."""

    ufunc, larger = "minimum", False


class Fmax(_Extremum):
    """The larger of a and b, ignoring a nan (the other value wins)."""

    ufunc, nan_loses = "fmax", True


class Fmin(_Extremum):
    """The smaller of a and b, ignoring a nan (the other value wins)."""

    ufunc, larger, nan_loses = "fmin", False, True


def _extremum(a, b, name: str):
    dtype = result_type(a, b)
    xp = (a if isinstance(a, Tensor) else b)._device.xp
    return getattr(xp, name)(cast_to(a, dtype), cast_to(b, dtype))


def _saved_values(ctx, grad: Tensor) -> tuple:
    """The saved operands as arrays (or numbers) of the result dtype, for comparisons."""
    return tuple(cast_to(value, grad._data.dtype) for value in ctx.saved_tensors)


def _isnan(value, grad: Tensor):
    return grad._device.xp.isnan(value)


def _extremum_grads(ctx, grad: Tensor, x, y, a_loses, b_loses) -> tuple:
    """Each input gets the gradient where it won, half of it at a tie, exactly 0 where it lost."""
    needs = ctx.needs_input_grad
    tie = x == y
    half = where(wrap_array(tie, grad._device), grad * 0.5, grad) if tie.any() else grad
    return ((gate_off(half, a_loses) if needs[0] else None),
            (gate_off(half, b_loses) if needs[1] else None))


def maximum(input, other) -> Tensor:
    """Elementwise maximum, broadcasting; nan wins. At a tie each input gets half the gradient.

    >>> import genesis
    >>> genesis.maximum(genesis.tensor([1., 5.]), genesis.tensor([3., 2.]))
    tensor([3., 5.])
    """
    return Maximum.apply(input, other)


def minimum(input, other) -> Tensor:
    """Elementwise minimum, broadcasting; nan wins. At a tie each input gets half the gradient.

    >>> import genesis
    >>> genesis.minimum(genesis.tensor([1., 5.]), genesis.tensor([3., 2.]))
    tensor([1., 2.])
    """
    return Minimum.apply(input, other)


def fmax(input, other) -> Tensor:
    """Elementwise maximum that ignores nan (the other value is taken).

    >>> import genesis
    >>> genesis.fmax(genesis.tensor([float("nan"), 1.]), genesis.tensor([2., float("nan")]))
    tensor([2., 1.])
    """
    return Fmax.apply(input, other)


def fmin(input, other) -> Tensor:
    """Elementwise minimum that ignores nan (the other value is taken).

    >>> import genesis
    >>> genesis.fmin(genesis.tensor([float("nan"), 1.]), genesis.tensor([2., float("nan")]))
    tensor([2., 1.])
    """
    return Fmin.apply(input, other)


METHODS = {"maximum": maximum, "minimum": minimum, "fmax": fmax, "fmin": fmin}


def _samples_extremum(rng):
    """Random pairs (ties, the kinks, have probability 0; tests/ops/test_pairwise_extrema.py pins them)."""
    return (samples.binary(samples.values, samples.values, rng)
            + samples.with_scalar(samples.values, rng, 0.3))


def _samples_nan_extremum(rng):
    a = samples.values(rng, (3, 4))
    b = samples.values(rng, (3, 4))
    a[0, 1] = b[2, 3] = np.nan
    return [Sample((a, b), note="with nan")]


OPS = [
    OpInfo("maximum", maximum, _samples_extremum, kinks="a == b (a tie splits the gradient)",
           torch=lambda torch, a, b: torch.maximum(a, torch.as_tensor(b, dtype=a.dtype))),
    OpInfo("minimum", minimum, _samples_extremum, kinks="a == b (a tie splits the gradient)",
           torch=lambda torch, a, b: torch.minimum(a, torch.as_tensor(b, dtype=a.dtype))),
    OpInfo("fmax", fmax, lambda rng: _samples_extremum(rng)[:3] + _samples_nan_extremum(rng),
           kinks="a == b", torch=lambda torch, a, b: torch.fmax(a, b)),
    OpInfo("fmin", fmin, lambda rng: _samples_extremum(rng)[:3] + _samples_nan_extremum(rng),
           kinks="a == b", torch=lambda torch, a, b: torch.fmin(a, b)),
]
