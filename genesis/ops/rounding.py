"""Rounding: floor, ceil, round, trunc (piecewise constant: zero gradient) and frac.

Integer inputs come back unchanged (a copy); bools are refused, as in PyTorch.
`round` rounds half to even, and with `decimals` rounds to that many digits.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor
from . import samples
from ._operands import zeros_of
from .inplace import apply_inplace
from .registry import OpInfo

__all__ = ["floor", "ceil", "round", "trunc", "fix", "frac"]


def _refuse_bool(op: str, a: Tensor) -> None:
    if a._data.dtype.kind == "b":
        raise RuntimeError(f"{op}: not supported for bool tensors; convert first with .int() "
                           "or .float()")


class _Step(Op):
    """A piecewise-constant rounding (`ufunc`: floor, ceil or trunc): integer tensors come back
    unchanged, and the gradient is zero everywhere, as in PyTorch."""

    ufunc = ""

    @staticmethod
    def forward(ctx, a):
        name = type(ctx)._forward_cls.ufunc
        _refuse_bool(name, a)
        data = a._data
        return getattr(a._device.xp, name)(data) if data.dtype in FLOATING_NUMPY_DTYPES else data.copy()

    @staticmethod
    def backward(ctx, grad):
        return zeros_of(grad)


class Floor(_Step):
    """The largest integer <= a."""

    ufunc = "floor"


class Ceil(_Step):
    """The smallest integer >= a."""

    ufunc = "ceil"


class Trunc(_Step):
    """a rounded toward zero."""

    ufunc = "trunc"


class Round(Op):
    """a rounded half to even, to `decimals` digits (negative: to tens, hundreds, ...)."""

    @staticmethod
    def forward(ctx, a, decimals):
        _refuse_bool("round", a)
        data = a._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            if decimals != 0:
                raise RuntimeError(f"round: decimals={decimals} needs a floating point tensor, "
                                   f"got {a.dtype.name}; convert first with .float()")
            return data.copy()
        xp = a._device.xp
        if decimals == 0:
            return xp.rint(data)
        # the same steps as PyTorch, so halfway cases round the same way
        if decimals > 0:
            scale = 10.0 ** decimals
            return xp.rint(data * scale) / scale
        scale = 10.0 ** -decimals
        return xp.rint(data / scale) * scale

    @staticmethod
    def backward(ctx, grad):
        return zeros_of(grad), None


class Frac(Op):
    """a - trunc(a), the fractional part with the sign of a; its gradient is 1."""

    @staticmethod
    def forward(ctx, a):
        data = a._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            raise RuntimeError(f"frac: needs a floating point tensor, got {a.dtype.name}; "
                               "convert first with .float()")
        return data - a._device.xp.trunc(data)

    @staticmethod
    def backward(ctx, grad):
        return grad


def floor(input: Tensor) -> Tensor:
    """Round down to an integer value (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).floor()
    tensor([-2.,  1.])
    """
    return Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    """Round up to an integer value (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).ceil()
    tensor([-1.,  2.])
    """
    return Ceil.apply(input)


def trunc(input: Tensor) -> Tensor:
    """Round toward zero (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).trunc()
    tensor([-1.,  1.])
    """
    return Trunc.apply(input)


def round(input: Tensor, decimals: int = 0) -> Tensor:
    """Round half to even, to `decimals` decimal digits (zero gradient).

    >>> import genesis
    >>> genesis.tensor([0.5, 1.5, 2.5]).round(), genesis.tensor([1.2345]).round(decimals=2)
    (tensor([0., 2., 2.]), tensor([1.2300]))
    """
    if not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
    return Round.apply(input, decimals)


def frac(input: Tensor) -> Tensor:
    """The fractional part, input - trunc(input).

    >>> import genesis
    >>> genesis.tensor([-1.25, 2.5]).frac()
    tensor([-0.2500,  0.5000])
    """
    return Frac.apply(input)


fix = trunc


def floor_(self: Tensor) -> Tensor:
    """In place: round down."""
    return apply_inplace(Floor, self)


def ceil_(self: Tensor) -> Tensor:
    """In place: round up."""
    return apply_inplace(Ceil, self)


def trunc_(self: Tensor) -> Tensor:
    """In place: round toward zero."""
    return apply_inplace(Trunc, self)


def round_(self: Tensor, decimals: int = 0) -> Tensor:
    """In place: round half to even."""
    return apply_inplace(Round, self, decimals)


def frac_(self: Tensor) -> Tensor:
    """In place: keep the fractional part."""
    return apply_inplace(Frac, self)


METHODS = {"floor": floor, "ceil": ceil, "trunc": trunc, "fix": trunc, "round": round,
           "frac": frac, "floor_": floor_, "ceil_": ceil_, "trunc_": trunc_, "fix_": trunc_,
           "round_": round_, "frac_": frac_}


def _unit_samples(rng):
    """Values away from the integers and half-integers, where rounding jumps."""
    return samples.unary(lambda r, shape: samples.away_from(
        r, shape, points=tuple(x / 2 for x in range(-4, 5)), margin=0.02), rng)


def _decimal_samples(rng, decimals):
    step = 10.0 ** -decimals
    return samples.unary(lambda r, shape: np.asarray(step * samples.away_from(
        r, shape, points=tuple(x / 2 for x in range(-8, 9)), margin=0.02, low=-4.0, high=4.0)),
        rng, decimals=decimals)


OPS = [
    OpInfo("floor", floor, _unit_samples, torch=lambda torch, a: torch.floor(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("ceil", ceil, _unit_samples, torch=lambda torch, a: torch.ceil(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("trunc", trunc, _unit_samples, torch=lambda torch, a: torch.trunc(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("round", round, lambda rng: _unit_samples(rng) + _decimal_samples(rng, 2)
           + _decimal_samples(rng, -1)[:2],
           torch=lambda torch, a, **kw: torch.round(a, **kw),
           kinks="halfway points (a jump; the gradient is 0)"),
    OpInfo("frac", frac, _unit_samples, torch=lambda torch, a: torch.frac(a),
           kinks="integers (a jump)"),
]
