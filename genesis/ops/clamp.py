"""clamp (clip): values limited to [min, max], with numbers or tensors as bounds.

Gradients follow PyTorch: the input gets it on the boundary (min <= x <= max).
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..device import devices_agree
from ..tensor import Tensor
from . import samples
from ._operands import cast_to, device_mismatch, result_type
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .where import gate

__all__ = ["clamp", "clip", "clamp_min", "clamp_max"]


class Clamp(Op):
    """min(max(a, low), high); `low` and `high` may be numbers, tensors or None.

    Gradients (PyTorch's): the input gets it where low <= a <= high; `low` where
    a < low < high; `high` where a > high, or wherever high < low (then high wins).
    """

    @staticmethod
    def forward(ctx, a, low, high):
        dtype = result_type(a, low, high)
        x = a._data.astype(dtype, copy=False)
        ctx.save_for_backward(a, low, high)
        return a._device.xp.clip(x, cast_to(low, dtype), cast_to(high, dtype))

    @staticmethod
    def forward_inplace(target, low, high):
        target._device.xp.clip(target._data, cast_to(low, target._data.dtype),
                               cast_to(high, target._data.dtype), out=target._data)

    @staticmethod
    def backward(ctx, grad):
        x, low, high = (cast_to(value, grad._data.dtype) for value in ctx.saved_tensors)
        needs = ctx.needs_input_grad
        grads = [None, None, None]
        if needs[0]:
            inside = True
            if low is not None:
                inside = x >= low
            if high is not None:
                inside = inside & (x <= high)
            grads[0] = gate(grad, inside)
        if needs[1]:
            grads[1] = gate(grad, (x < low) & (low < high) if high is not None else x < low)
        if needs[2]:
            grads[2] = gate(grad, (x > high) | (high < low) if low is not None else x > high)
        return tuple(grads)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    """Limit values to [min, max]; either bound may be None, a number or a tensor (broadcast).

    >>> import genesis
    >>> genesis.tensor([-2., 0.5, 3.]).clamp(-1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    return Clamp.apply(input, *_bounds("clamp", input, min, max))


def _bounds(op: str, input: Tensor, low, high) -> tuple:
    if low is None and high is None:
        raise RuntimeError(f"{op}: at least one of min and max must be given")
    for bound in (low, high):
        if isinstance(bound, Tensor) and not devices_agree(bound, input):
            raise RuntimeError(device_mismatch(op, input, bound))
    return low, high


def clamp_min(input: Tensor, min) -> Tensor:
    """Limit values from below: max(input, min)."""
    return clamp(input, min, None)


def clamp_max(input: Tensor, max) -> Tensor:
    """Limit values from above: min(input, max)."""
    return clamp(input, None, max)


clip = clamp


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    """In place: clamp to [min, max]."""
    return apply_inplace(Clamp, self, *_bounds("clamp_", self, min, max))


def clamp_min_(self: Tensor, min) -> Tensor:
    """In place: clamp from below."""
    return clamp_(self, min, None)


def clamp_max_(self: Tensor, max) -> Tensor:
    """In place: clamp from above."""
    return clamp_(self, None, max)


METHODS = {
    "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "clamp_": clamp_, "clip_": clamp_, "clamp_min_": clamp_min_, "clamp_max_": clamp_max_,
}


def _samples_clamp(rng):
    def away(r, shape):
        return samples.away_from(r, shape, (-1.0, 1.0))

    bound_low = -0.6 + 0.2 * samples.values(rng, (4,))
    bound_high = 0.6 + 0.2 * samples.values(rng, (3, 1))
    x = samples.away_from(rng, (3, 4), (-1.0, -0.2, 0.2, 1.0), margin=0.05)
    return (samples.unary(away, rng, min=-1.0, max=1.0)
            + [Sample((away(rng, (3, 4)),), {"min": -0.5}, note="min only"),
               Sample((away(rng, (3, 4)),), {"max": 0.5}, note="max only"),
               Sample((x, bound_low, bound_high), note="tensor bounds, broadcast"),
               Sample((x, bound_low, None), note="tensor min only"),
               Sample((x, None, bound_high), note="tensor max only"),
               Sample((x, bound_high, np.full((4,), -0.5)),
                      note="min > max: max wins")])


OPS = [
    OpInfo("clamp", clamp, _samples_clamp, kinks="x == min or x == max",
           torch=lambda torch, a, *bounds, **kw: torch.clamp(a, *bounds, **kw)),
]
