"""Elementwise functions of a number's sign, exponent and divisors: copysign, heaviside,
nextafter, ldexp, frexp, float_power, sgn, and the integer gcd and lcm.

Gradients follow PyTorch: copysign's flows to its first input (sign-flipped where the sign
changed, 0 where the input is 0) and none to the second; nextafter's passes through to its
first input; frexp's mantissa has gradient 2^-exponent; heaviside has none (its backward
raises, as PyTorch's); ldexp's flows as PyTorch's, from `other` and the output; float_power
is a composition whose gradient is its parts'.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..autograd.function import Op
from ..autograd.grad_mode import no_grad
from ..dtypes import FLOATING_NUMPY_DTYPES, float64
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import device_of, float_operands, kind_of, operands, zeros_of
from .elementwise import pow
from .fill import copy_
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .unary import exp2, sign

__all__ = ["copysign", "heaviside", "nextafter", "ldexp", "frexp", "float_power", "sgn", "gcd",
           "lcm"]

frexp_result = namedtuple("frexp", ("mantissa", "exponent"))


def _arrays(x, y, device):
    """Both operands as arrays of one dtype on `device` (a number takes the other's dtype)."""
    xp = device.xp
    dtype = x.dtype if hasattr(x, "dtype") else y.dtype
    return xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype)


class Copysign(Op):
    """|a| with the sign of b; d/da = ±1 (0 where a is 0), d/db = 0."""

    @staticmethod
    def forward(ctx, a, b):
        device = device_of(a, b)
        x, y = _arrays(*float_operands(a, b, "copysign"), device)
        out = wrap_array(device.xp.copysign(x, y), device)
        # as PyTorch's: the input and output only for d/da (d/db is 0)
        ctx.save_for_backward(*((a, out) if ctx.needs_input_grad[0] else (None, None)))
        ctx.b_is_tensor = isinstance(b, Tensor)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        grad_a = grad * (sign(a) * sign(out)) if ctx.needs_input_grad[0] else None
        grad_b = zeros_of(grad) if ctx.b_is_tensor and ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Nextafter(Op):
    """The next floating point value after a towards b; the gradient passes to a (PyTorch's
    choice), 0 to b."""

    @staticmethod
    def forward(ctx, a, b):
        device = device_of(a, b)
        x, y = _arrays(*operands(a, b, "nextafter"), device)
        if x.dtype not in FLOATING_NUMPY_DTYPES:
            raise NotImplementedError(f"nextafter: not implemented for {x.dtype} tensors; "
                                      "convert first with .float()")
        ctx.b_is_tensor = isinstance(b, Tensor)
        return device.xp.nextafter(x, y)

    @staticmethod
    def backward(ctx, grad):
        grad_b = zeros_of(grad) if ctx.b_is_tensor and ctx.needs_input_grad[1] else None
        return grad, grad_b


class Heaviside(Op):
    """The step function: 0 below 0, `values` at 0, 1 above. Not differentiable: its backward
    raises, as PyTorch's does."""

    @staticmethod
    def forward(ctx, a, values):
        if a.dtype != values.dtype:
            raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                               f"dtypes (got {a.dtype} and {values.dtype}); convert one with "
                               f".to(other.dtype)")
        xp = a._device.xp
        x = a._data
        step = (x > 0).astype(x.dtype)
        return xp.where(x == 0, values._data, step)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for heaviside is not implemented (PyTorch has none "
                           "either); compute it on detached tensors")


class Frexp(Op):
    """(mantissa, exponent): x = mantissa * 2^exponent, |mantissa| in [0.5, 1), exponent int32;
    the mantissa's gradient is 2^-exponent."""

    @staticmethod
    def forward(ctx, a):
        data = a._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got "
                               f"{data.dtype}; convert first with .float()")
        xp = a._device.xp
        mantissa, exponent = xp.frexp(data)
        if ctx.needs_input_grad[0]:
            with np.errstate(over="ignore"):  # subnormals: 2^-exponent is inf, as in PyTorch
                ctx.scale = xp.ldexp(xp.ones_like(data), -exponent)
        return mantissa, exponent.astype(np.int32)

    @staticmethod
    def backward(ctx, grad, grad_exponent):
        return grad * wrap_array(ctx.scale, grad._device)


def copysign(input, other) -> Tensor:
    """|input| with the sign of `other`, elementwise (integers give float32).

    >>> import genesis
    >>> genesis.copysign(genesis.tensor([1.0, -2.0, 3.0]), genesis.tensor([-1.0, 1.0, -0.0]))
    tensor([-1.,  2., -3.])
    """
    return Copysign.apply(input, other)


def nextafter(input, other) -> Tensor:
    """The next representable floating point value after `input` towards `other`.

    >>> import genesis
    >>> (genesis.nextafter(genesis.tensor([1.0], dtype=genesis.float64), 2.0) - 1).item()
    2.220446049250313e-16
    """
    return Nextafter.apply(input, other)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where input < 0, `values` where input == 0, 1 where input > 0.

    >>> import genesis
    >>> genesis.heaviside(genesis.tensor([-1.0, 0.0, 2.0]), genesis.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if not isinstance(input, Tensor) or not isinstance(values, Tensor):
        raise TypeError("heaviside(): argument 'values' must be Tensor, got "
                        f"{type(values).__name__}; wrap a number with genesis.tensor(...)")
    return Heaviside.apply(input, values)


def frexp(input: Tensor) -> tuple:
    """(mantissa, exponent) with input = mantissa * 2^exponent and 0.5 <= |mantissa| < 1.

    >>> import genesis
    >>> genesis.frexp(genesis.tensor([8.0, -3.0]))
    frexp(mantissa=tensor([ 0.5000, -0.7500]), exponent=tensor([4, 2], dtype=genesis.int32))
    """
    mantissa, exponent = Frexp.apply(input)
    return frexp_result(mantissa, exponent)


def ldexp(input, other) -> Tensor:
    """input * 2^other (integers give float32); differentiable in both.

    >>> import genesis
    >>> genesis.ldexp(genesis.tensor([1.0, 3.0]), genesis.tensor([3, -1]))
    tensor([8.0000, 1.5000])
    """
    return Ldexp.apply(input, other)


class Ldexp(Op):
    """input * 2^other; d/d(input) = 2^other, d/d(other) = out * log 2. As PyTorch's, it keeps
    `other` and the output (not the input), each only for the gradient that reads it."""

    @staticmethod
    def forward(ctx, a, b):
        with no_grad():  # genesis's product and exp2 (their dtypes), recording no nodes: the
            out = a * _power_of_two(b)  # output kept is the one returned, checked for writes
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(b if needs_a else None, out if needs_b else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return (grad * _power_of_two(b) if needs_a else None,
                grad * out * _LN2 if needs_b else None)


def _power_of_two(exponent):
    return exp2(exponent) if isinstance(exponent, Tensor) else 2.0 ** exponent


_LN2 = math.log(2.0)


def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in float64 (the result is float64), as torch.float_power.

    >>> import genesis
    >>> genesis.float_power(genesis.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=genesis.float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power: expected at least one Tensor operand, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    base = input.to(float64) if isinstance(input, Tensor) else float(input)
    power = exponent.to(float64) if isinstance(exponent, Tensor) else float(exponent)
    return pow(base, power)


def float_power_(self: Tensor, exponent) -> Tensor:
    """In place: self = float_power(self, exponent); self must be float64."""
    if self.dtype is not float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype} but the "
                           "operation's result requires dtype float64; convert with .double()")
    return copy_(self, float_power(self.clone(), exponent))


def sgn(input: Tensor) -> Tensor:
    """The sign of each element (-1, 0, 1): `sign` for real tensors.

    >>> import genesis
    >>> genesis.sgn(genesis.tensor([-2.0, 0.0, 5.0]))
    tensor([-1.,  0.,  1.])
    """
    return sign(input)


def sgn_(self: Tensor) -> Tensor:
    """In place: self = sgn(self)."""
    return self.sign_()


def _integer_op(name: str, ufunc: str):
    def function(input: Tensor, other: Tensor) -> Tensor:
        x, y = operands(input, other, name)
        if kind_of(x) not in "iu" or kind_of(y) not in "iu":
            raise NotImplementedError(f"{name}: defined for integer tensors only, got "
                                      f"{getattr(x, 'dtype', type(x).__name__)} and "
                                      f"{getattr(y, 'dtype', type(y).__name__)}; convert with "
                                      ".long()")
        device = device_of(input, other)
        x, y = _arrays(x, y, device)
        return wrap_array(getattr(device.xp, ufunc)(x, y), device)
    return function


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor of integers, elementwise (gcd(0, 0) = 0).

    >>> import genesis
    >>> genesis.gcd(genesis.tensor([12, -18, 0]), genesis.tensor([8, 12, 0]))
    tensor([4, 6, 0])
    """
    return _gcd(input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of integers, elementwise (0 where either is 0).

    >>> import genesis
    >>> genesis.lcm(genesis.tensor([4, -6, 0]), genesis.tensor([6, 4, 5]))
    tensor([12, 12,  0])
    """
    return _lcm(input, other)


_gcd, _lcm = _integer_op("gcd", "gcd"), _integer_op("lcm", "lcm")


def _in_place(cls, name: str):
    """`self.name_(other)`: the op written into self (genesis.ops.inplace: PyTorch's
    semantics)."""
    def method(self: Tensor, other) -> Tensor:
        return apply_inplace(cls, self, other)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: self = {name}(self, other)."
    return method


def _copied_in(function, name: str):
    """`self.name_(other)` for a function with no Function of its own: its result copied into
    self, computed from a copy of self (which it may save for backward)."""
    def method(self: Tensor, other) -> Tensor:
        return copy_(self, function(self.clone(), other))

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: self.copy_({name}(self, other))."
    return method


METHODS = {"copysign": copysign, "heaviside": heaviside, "nextafter": nextafter, "ldexp": ldexp,
           "gcd": gcd, "lcm": lcm, "frexp": frexp, "float_power": float_power,
           "float_power_": float_power_, "sgn_": sgn_,
           "copysign_": _in_place(Copysign, "copysign"),
           "nextafter_": _in_place(Nextafter, "nextafter"),
           "heaviside_": _in_place(Heaviside, "heaviside"), "ldexp_": _copied_in(ldexp, "ldexp"),
           "gcd_": _copied_in(gcd, "gcd"), "lcm_": _copied_in(lcm, "lcm")}


def _nonzero(rng, shape):
    return samples.away_from(rng, shape, (0.0,), margin=0.3)


def _integers(rng, shape):
    return rng.integers(-30, 30, size=shape)


def _integer_samples(rng) -> list:
    return [Sample((_integers(rng, (3, 4)), _integers(rng, (3, 4))), note="same shape"),
            Sample((_integers(rng, (3, 4)), _integers(rng, (4,))), note="broadcast"),
            Sample((_integers(rng, (4, 3)), _integers(rng, (4, 3))), layout="transposed",
                   note="transposed")]


OPS = [
    OpInfo("copysign", copysign, lambda rng: samples.binary(_nonzero, _nonzero, rng),
           torch=lambda torch, a, b: torch.copysign(a, b),
           kinks="input == 0 (the gradient there is 0)"),
    OpInfo("nextafter", nextafter, lambda rng: samples.binary(samples.values, samples.values, rng),
           torch=lambda torch, a, b: torch.nextafter(a, b)),
    OpInfo("ldexp", ldexp, lambda rng: samples.binary(samples.values, samples.values, rng),
           torch=lambda torch, a, b: torch.ldexp(a, b)),
    OpInfo("frexp", frexp, lambda rng: samples.unary(_nonzero, rng),
           torch=lambda torch, a: torch.frexp(a),
           kinks="the powers of two (the mantissa jumps)"),
    OpInfo("float_power", float_power, lambda rng: samples.binary(
        lambda rng, shape: samples.positive(rng, shape), samples.values, rng) + [
        Sample((samples.positive(rng, (3, 4)), 3), note="scalar exponent")],
        torch=lambda torch, a, b: torch.float_power(a, b)),
    OpInfo("heaviside", heaviside, lambda rng: samples.binary(samples.values, samples.values, rng),
           differentiable=False, torch=lambda torch, a, b: torch.heaviside(a, b),
           kinks="input == 0 (a jump)"),
    OpInfo("gcd", gcd, _integer_samples, differentiable=False,
           torch=lambda torch, a, b: torch.gcd(a, b)),
    OpInfo("lcm", lcm, _integer_samples, differentiable=False,
           torch=lambda torch, a, b: torch.lcm(a, b)),
]
