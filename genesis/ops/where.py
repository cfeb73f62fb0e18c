"""`where`: each element from one input or the other by a condition, and the masked
gradients (`gate`, `gate_off`) that every op choosing among its inputs gives back.

A masked gradient is an exact 0 even where the incoming gradient is inf or nan, as in
PyTorch.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..device import devices_agree
from ..tensor import Tensor
from . import samples
from ._operands import cast_to, device_mismatch, result_type
from .gradient_rules import run_rule
from .registry import OpInfo, Sample

__all__ = ["where"]


class Where(Op):
    """condition ? input : other, elementwise and broadcasting."""

    @staticmethod
    def forward(ctx, condition, input, other):
        ctx.save_for_backward(condition)
        dtype = result_type(input, other)
        xp = condition._device.xp
        out = xp.where(condition._data, cast_to(input, dtype), cast_to(other, dtype))
        return out if out.dtype == dtype else out.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (None, where(condition, grad, 0.0) if needs[1] else None,
                where(condition, 0.0, grad) if needs[2] else None)


def where(condition: Tensor, input, other) -> Tensor:
    """`input` where `condition` is True, else `other`; either may be a number.

    >>> import genesis
    >>> x = genesis.tensor([-1., 2., -3.])
    >>> genesis.where(x > 0, x, 0.0)
    tensor([0., 2., 0.])
    """
    if not isinstance(condition, Tensor) or condition._data.dtype != np.bool_:
        got = condition.dtype.name if isinstance(condition, Tensor) else type(condition).__name__
        raise RuntimeError(f"where: condition must be a bool tensor, got {got}; build it with a "
                           "comparison (x > 0) or convert with .bool()")
    for value in (input, other):
        if isinstance(value, Tensor) and not devices_agree(value, condition):
            raise RuntimeError(device_mismatch("where", condition, value))
    return Where.apply(condition, input, other)


def _tensor_where(self, condition, other) -> Tensor:
    """`self.where(condition, other)`: self where condition, else other."""
    return where(condition, self, other)


def gate(grad: Tensor, keep) -> Tensor:
    """`grad` where the bool array `keep` is True, else exactly 0 (PyTorch's masked gradient)."""
    return run_rule(_gate_rule, grad, keep)


def gate_off(grad: Tensor, drop) -> Tensor:
    """`grad` where the bool array `drop` is False, else exactly 0: `gate(grad, ~drop)` without
    the extra pass over the mask on a GPU."""
    return run_rule(_gate_off_rule, grad, drop)


def _gate_rule(m, grad, keep):
    return m.gate(grad, keep)


def _gate_off_rule(m, grad, drop):
    return m.gate_off(grad, drop)


METHODS = {"where": _tensor_where}


def _samples_where(rng):
    def with_condition(shape, a, b, **kwargs):
        return Sample((np.asarray(rng.random(shape) < 0.5), a, b), **kwargs)

    values = samples.values
    return [
        with_condition((3, 4), values(rng, (3, 4)), values(rng, (3, 4)), note="same shape"),
        with_condition((3, 1), values(rng, (4,)), values(rng, (2, 1, 4)), note="broadcast all"),
        with_condition((3, 4), values(rng, (3, 4)), values(rng, (3, 4)), grad=(False, False, True),
                       note="input needs no grad"),
        with_condition((4, 3), values(rng, (4, 3)), values(rng, (4, 3)), layout="transposed",
                       note="transposed"),
        with_condition((3, 4), values(rng, (3, 4)), 0.5, note="scalar other"),
        with_condition((3, 4), -1.5, values(rng, (3, 4)), note="scalar input"),
        with_condition((), values(rng, (2, 3)), values(rng, ()), note="0-d condition and other"),
        with_condition((0, 3), values(rng, (0, 3)), values(rng, (0, 3)), note="zero-size"),
    ]


OPS = [
    OpInfo("where", where, _samples_where,
           torch=lambda torch, c, a, b: torch.where(c, a, b)),
]
