"""Rounded division and remainders: div with rounding_mode, floor_divide (`//`), remainder
(`%`, the sign of the divisor, as Python's) and fmod (the sign of the dividend, as C's).

Integer operands stay integers, and dividing them by zero is an error (PyTorch's
ZeroDivisionError); floats give inf/nan. Rounded quotients have a zero gradient;
floor_divide has none at all, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from . import samples
from ._operands import (both_integral, device_of, ignore_float_errors, kind_of, operands,
                        reflected, zeros_of)
from .inplace import apply_inplace
from .registry import OpInfo

__all__ = ["floor_divide", "remainder", "fmod"]


class RoundedDiv(Op):
    """a / b rounded toward zero ("trunc") or down ("floor"); integers stay integers.

    The result is piecewise constant, so its gradient is zero (PyTorch's convention).
    """

    @staticmethod
    def forward(ctx, a, b, mode):
        return _rounded_quotient(a, b, mode, "div")

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        return (zeros_of(grad) if needs[0] else None), (zeros_of(grad) if needs[1] else None), None


class FloorDivide(Op):
    """a // b; like PyTorch, it has no derivative (use div(..., rounding_mode="floor"))."""

    @staticmethod
    def forward(ctx, a, b):
        return _rounded_quotient(a, b, "floor", "floor_divide")

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            "the derivative of floor_divide (`//`) is not implemented, as in PyTorch; use "
            "div(a, b, rounding_mode='floor'), whose gradient is zero, or detach() the inputs")


@ignore_float_errors
def _rounded_quotient(a, b, mode: str, op: str):
    x, y = operands(a, b, op)
    xp = device_of(a, b).xp
    if both_integral(x, y):
        _refuse_bool_or_zero(op, x, y, xp)
        quotient = xp.floor_divide(x, y)
        if mode == "trunc":  # floor is one below trunc where the exact quotient is negative
            quotient = quotient + ((quotient < 0) & (quotient * y != x))
        return quotient
    return xp.floor_divide(x, y) if mode == "floor" else xp.trunc(xp.true_divide(x, y))


class _Modulo(Op):
    """a mod b computed by `ufunc`; d/da = 1, d/db = -(a / b rounded by `rounding`)."""

    ufunc = rounding = ""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, b):
        name = type(ctx)._forward_cls.ufunc
        if ctx.needs_input_grad[1]:
            ctx.save_for_backward(a, b)
        x, y = operands(a, b, name)
        xp = device_of(a, b).xp
        if both_integral(x, y):
            _refuse_bool_or_zero(name, x, y, xp)
        return getattr(xp, name)(x, y)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[1]:
            return grad, None
        a, b = ctx.saved_tensors
        quotient = RoundedDiv.apply(a, b, type(ctx)._forward_cls.rounding)
        return (grad if ctx.needs_input_grad[0] else None), -grad * quotient


class Remainder(_Modulo):
    """a mod b with the sign of b (Python's `%`); d/db = -floor(a / b)."""

    ufunc, rounding = "remainder", "floor"


class Fmod(_Modulo):
    """a mod b with the sign of a (C's fmod); d/db = -trunc(a / b)."""

    ufunc, rounding = "fmod", "trunc"


def _refuse_bool_or_zero(op: str, x, y, xp) -> None:
    if kind_of(x) == "b" and kind_of(y) == "b":
        raise RuntimeError(f"{op}: not supported for bool tensors; convert first with .int()")
    if bool(xp.any(xp.asarray(y) == 0)):
        raise RuntimeError(f"{op}: integer division by zero (PyTorch raises ZeroDivisionError); "
                           "use floating point tensors to get inf/nan instead")


def rounding_mode_checked(mode):
    if mode not in ("trunc", "floor"):
        raise RuntimeError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")
    return mode


def floor_divide(input, other) -> Tensor:
    """input // other, rounded down (Python's `//`); not differentiable, as in PyTorch.

    >>> import genesis
    >>> genesis.tensor([-7., 7.]) // 2
    tensor([-4.,  3.])
    """
    return FloorDivide.apply(input, other)


def remainder(input, other) -> Tensor:
    """input mod other, with the sign of `other` (Python's `%`).

    >>> import genesis
    >>> genesis.tensor([-7., 7.]) % 3
    tensor([2., 1.])
    """
    return Remainder.apply(input, other)


def fmod(input, other) -> Tensor:
    """input mod other, with the sign of `input` (C's fmod).

    >>> import genesis
    >>> genesis.fmod(genesis.tensor([-7., 7.]), 3)
    tensor([-1.,  1.])
    """
    return Fmod.apply(input, other)


def floor_divide_(self, other) -> Tensor:
    """In place: self //= other."""
    return apply_inplace(FloorDivide, self, other)


def remainder_(self, other) -> Tensor:
    """In place: self %= other."""
    return apply_inplace(Remainder, self, other)


def fmod_(self, other) -> Tensor:
    """In place: self = fmod(self, other)."""
    return apply_inplace(Fmod, self, other)


METHODS = {
    "floor_divide": floor_divide, "remainder": remainder, "fmod": fmod,
    "floor_divide_": floor_divide_, "remainder_": remainder_, "fmod_": fmod_,
    "__floordiv__": floor_divide, "__rfloordiv__": reflected(floor_divide),
    "__mod__": remainder, "__rmod__": reflected(remainder),
    "__ifloordiv__": floor_divide_, "__imod__": remainder_,
}


def _away_from_integers(rng, shape):
    """Values in [-4, 4) at least 0.05 away from integers."""
    return samples.away_from(rng, shape, points=tuple(range(-4, 5)), margin=0.05,
                             low=-4.0, high=4.0)


def modulo_samples(rng):
    """Divisors +-1.5 and dividends 1.5 * q, q away from integers: a / b never sits where
    a // b jumps, whichever elements broadcasting pairs up."""
    def divisor(r, shape):
        return np.asarray(1.5 * r.choice((-1.0, 1.0), size=shape))

    def dividend(r, shape):
        return np.asarray(1.5 * _away_from_integers(r, shape))

    return (samples.binary(dividend, divisor, rng)
            + samples.with_scalar(_away_from_integers, rng, 1.0)
            + samples.scalar_first(divisor, rng, 2.5))


def _torch_tensor(torch, a, b):
    """`a` as a torch tensor: PyTorch has no fmod(number, tensor), nor a gradient for
    remainder(number, tensor)."""
    return a if isinstance(a, torch.Tensor) else torch.as_tensor(a, dtype=b.dtype)


OPS = [
    OpInfo("floor_divide", floor_divide, modulo_samples, differentiable=False,
           torch=lambda torch, a, b: torch.floor_divide(a, b)),
    OpInfo("remainder", remainder, modulo_samples,
           torch=lambda torch, a, b: torch.remainder(_torch_tensor(torch, a, b), b),
           kinks="a / b an integer"),
    OpInfo("fmod", fmod, modulo_samples,
           torch=lambda torch, a, b: torch.fmod(_torch_tensor(torch, a, b), b),
           kinks="a / b an integer"),
]
