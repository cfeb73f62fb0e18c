"""Elementwise choices between inputs: where, maximum, minimum, clamp.

The gradient goes to whichever input was chosen. The conventions at ties and
boundaries are PyTorch's: maximum/minimum split a tie evenly, clamp passes the
gradient to the input on the boundary (min <= x <= max), and a masked gradient
is an exact 0 even where the incoming gradient is inf or nan.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..device import devices_agree
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import cast_to, device_mismatch, result_type
from ._select import masked
from .inplace import apply_inplace
from .registry import OpInfo, Sample

__all__ = ["where", "maximum", "minimum", "fmax", "fmin", "clamp", "clip", "clamp_min",
           "clamp_max"]


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
    return _masked(grad, keep, True)


def gate_off(grad: Tensor, drop) -> Tensor:
    """`grad` where the bool array `drop` is False, else exactly 0: `gate(grad, ~drop)` without
    the extra pass over the mask on a GPU."""
    return _masked(grad, drop, False)


def _masked(grad: Tensor, mask, keep_where_true: bool) -> Tensor:
    device = grad._device
    if grad_state.enabled:  # create_graph: a node, so the gradient is differentiable
        keep = mask if keep_where_true else ~mask
        return Where.apply(wrap_array(keep, device), grad, 0.0)
    return wrap_array(masked(device, grad._data, mask, keep_where_true), device)


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
    "where": _tensor_where, "maximum": maximum, "minimum": minimum, "fmax": fmax, "fmin": fmin,
    "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "clamp_": clamp_, "clip_": clamp_, "clamp_min_": clamp_min_, "clamp_max_": clamp_max_,
}


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


def _samples_extremum(rng):
    """Random pairs (ties, the kinks, have probability 0; tests/ops/test_selection.py pins them)."""
    return (samples.binary(samples.values, samples.values, rng)
            + samples.with_scalar(samples.values, rng, 0.3))


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


def _samples_nan_extremum(rng):
    a = samples.values(rng, (3, 4))
    b = samples.values(rng, (3, 4))
    a[0, 1] = b[2, 3] = np.nan
    return [Sample((a, b), note="with nan")]


OPS = [
    OpInfo("where", where, _samples_where,
           torch=lambda torch, c, a, b: torch.where(c, a, b)),
    OpInfo("maximum", maximum, _samples_extremum, kinks="a == b (a tie splits the gradient)",
           torch=lambda torch, a, b: torch.maximum(a, torch.as_tensor(b, dtype=a.dtype))),
    OpInfo("minimum", minimum, _samples_extremum, kinks="a == b (a tie splits the gradient)",
           torch=lambda torch, a, b: torch.minimum(a, torch.as_tensor(b, dtype=a.dtype))),
    OpInfo("fmax", fmax, lambda rng: _samples_extremum(rng)[:3] + _samples_nan_extremum(rng),
           kinks="a == b", torch=lambda torch, a, b: torch.fmax(a, b)),
    OpInfo("fmin", fmin, lambda rng: _samples_extremum(rng)[:3] + _samples_nan_extremum(rng),
           kinks="a == b", torch=lambda torch, a, b: torch.fmin(a, b)),
    OpInfo("clamp", clamp, _samples_clamp, kinks="x == min or x == max",
           torch=lambda torch, a, *bounds, **kw: torch.clamp(a, *bounds, **kw)),
]
