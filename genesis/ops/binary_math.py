"""Elementwise math of two inputs: atan2, hypot, logaddexp (broadcasting)."""
from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import device_of, float_operands, ignore_float_errors, kind_of, operands
from .registry import OpInfo

__all__ = ["atan2", "arctan2", "hypot", "logaddexp"]


def _floating_operands(a, b, op: str):
    """Operands of an op PyTorch defines for floating point only."""
    x, y = operands(a, b, op)
    if kind_of(x) != "f" and kind_of(y) != "f":
        names = [value.dtype.name for value in (a, b) if isinstance(value, Tensor)]
        raise RuntimeError(f"{op}: needs floating point inputs, got {' and '.join(names)}; "
                           "convert first with .float()")
    return x, y


class Atan2(Function):
    """The angle of the point (b, a): atan(a / b) in the right quadrant."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        x, y = float_operands(a, b, "atan2")
        return device_of(a, b).xp.arctan2(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        scale = grad / (a * a + b * b)
        return (scale * b if needs[0] else None), (-scale * a if needs[1] else None)


class Hypot(Function):
    """sqrt(a^2 + b^2), without overflow for large inputs."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = _floating_operands(a, b, "hypot")
        out = wrap_array(device_of(a, b).xp.hypot(x, y), device_of(a, b))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        scale = grad / out
        return (scale * a if needs[0] else None), (scale * b if needs[1] else None)


class Logaddexp(Function):
    """log(exp(a) + exp(b)), computed without overflow."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        x, y = _floating_operands(a, b, "logaddexp")
        return device_of(a, b).xp.logaddexp(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return ((grad / (1 + (b - a).exp()) if needs[0] else None),
                (grad / (1 + (a - b).exp()) if needs[1] else None))


def atan2(input, other) -> Tensor:
    """The angle of (other, input) in radians, in [-pi, pi]; integers give float32.

    >>> import genesis
    >>> genesis.atan2(genesis.tensor([1., -1.]), genesis.tensor([-1., -1.]))
    tensor([ 2.3562, -2.3562])
    """
    return Atan2.apply(input, other)


def hypot(input, other) -> Tensor:
    """sqrt(input^2 + other^2), elementwise.

    >>> import genesis
    >>> genesis.hypot(genesis.tensor([3.]), genesis.tensor([4.]))
    tensor([5.])
    """
    return Hypot.apply(input, other)


def logaddexp(input, other) -> Tensor:
    """log(exp(input) + exp(other)), stable for large values.

    >>> import genesis
    >>> genesis.logaddexp(genesis.tensor([1000.]), genesis.tensor([1000.]))
    tensor([1000.6932])
    """
    return Logaddexp.apply(input, other)


arctan2 = atan2

METHODS = {"atan2": atan2, "arctan2": atan2, "hypot": hypot, "logaddexp": logaddexp}


def _nonzero(rng, shape):
    return samples.away_from(rng, shape, (0.0,), margin=0.3)


OPS = [
    OpInfo("atan2", atan2, lambda rng: samples.binary(samples.values, _nonzero, rng),
           torch=lambda torch, a, b: torch.atan2(a, b)),
    OpInfo("hypot", hypot, lambda rng: samples.binary(_nonzero, _nonzero, rng),
           torch=lambda torch, a, b: torch.hypot(a, b)),
    OpInfo("logaddexp", logaddexp, lambda rng: samples.binary(samples.values, samples.values, rng),
           torch=lambda torch, a, b: torch.logaddexp(a, b)),
]
