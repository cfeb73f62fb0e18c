"""Padding (`genesis.nn.functional.pad`): constant, reflect, replicate and circular modes,
with PyTorch's rules; a negative amount crops that side.

`pad` lists (before, after) amounts from the last dim backwards: (left, right) pads the
last dim, (left, right, top, bottom) the last two. Constant padding works on any dims;
the other modes on the last 1, 2 or 3 dims of a batched or unbatched input, as in
PyTorch. Reflect and replicate read positions off the original tensor; circular wraps
around what is left after cropping.

Constant padding is its own adjoint (pad the gradient by the negated amounts: what was
added is cut away, what was cropped comes back as zeros). The other modes pick each output
element along every padded dim with an index array; the gradient adds each element back
where it was picked from.
"""
from __future__ import annotations

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..tensor import Tensor
from . import samples
from ._scatter import add_at
from .registry import OpInfo, Sample

__all__ = []  # public as genesis.nn.functional.pad, as in PyTorch

MODES = ("constant", "reflect", "replicate", "circular")


class ConstantPad(Op):
    """`a` with `amounts[d]` = (before, after) elements of `value` added along each dim d."""

    @staticmethod
    def forward(ctx, a, amounts, value):
        ctx.amounts = amounts
        data = a._data
        shape = tuple(n + before + after for n, (before, after) in zip(data.shape, amounts))
        out = a._device.xp.full(shape, value, data.dtype)
        source, target = [], []
        for n, (before, after) in zip(data.shape, amounts):
            start, stop = max(-before, 0), n - max(-after, 0)
            source.append(slice(start, max(stop, start)))
            target.append(slice(max(before, 0), max(before, 0) + max(stop - start, 0)))
        if out.size and data.size:
            out[tuple(target)] = data[tuple(source)]
        return out

    @staticmethod
    def backward(ctx, grad):
        negated = tuple((-before, -after) for before, after in ctx.amounts)
        return ConstantPad.apply(grad, negated, 0), None, None


class IndexPad(Op):
    """Along each (dim, index array) of `picks`, element i of the output is element index[i]
    of the input."""

    @staticmethod
    def forward(ctx, a, picks):
        ctx.picks, ctx.shape = picks, a.shape
        xp, out = a._device.xp, a._data
        for dim, index in picks:
            out = xp.take(out, index, axis=dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexPadAdjoint.apply(grad, ctx.picks, ctx.shape), None


class ReflectPad(IndexPad):
    """Reflect padding (graphs show the mode by name)."""


class ReplicatePad(IndexPad):
    """Replicate padding."""


class CircularPad(IndexPad):
    """Circular padding."""


_INDEX_PADS = {"reflect": ReflectPad, "replicate": ReplicatePad, "circular": CircularPad}


class IndexPadAdjoint(Op):
    """The gradient of `IndexPad`: each element added back at the position it was picked from."""

    @staticmethod
    def forward(ctx, grad, picks, shape):
        ctx.picks = picks
        xp, out = grad._device.xp, grad._data
        for dim, index in reversed(picks):
            gathered = xp.zeros(out.shape[:dim] + (shape[dim],) + out.shape[dim + 1:], out.dtype)
            add_at(xp, gathered, (slice(None),) * dim + (index,), out)
            out = gathered
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexPad.apply(grad, ctx.picks), None, None


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad (or, with negative amounts, crop) the trailing dims of `input`.

    `pad` = (left, right[, top, bottom[, front, back]]): amounts for the last dim first.
    `mode`: "constant" (`value`, default 0), "reflect" (mirror without repeating the
    edge), "replicate" (repeat the edge) or "circular" (wrap around).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.pad(genesis.tensor([[1., 2., 3.]]), (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]])
    >>> F.pad(genesis.tensor([[[1., 2., 3.]]]), (2, 1), mode="reflect")
    tensor([[[3., 2., 1., 2., 3., 2.]]])
    """
    amounts = _amounts(input, pad)
    if mode not in MODES:
        raise NotImplementedError(f"pad: unrecognised padding mode {mode!r}; use one of {MODES}")
    if mode == "constant":
        for dim, (n, (before, after)) in enumerate(zip(input.shape, amounts)):
            if n + before + after < 0:
                raise RuntimeError(f"pad: the input size {n} of dim {dim}, plus padding {before} "
                                   f"and {after}, gives a negative size")
        return ConstantPad.apply(input, amounts, 0 if value is None else value)
    if value is not None:
        raise RuntimeError(f'pad: padding mode "{mode}" doesn\'t take a value argument')
    padded_dims = len(pad) // 2
    if input.ndim not in (padded_dims + 1, padded_dims + 2):
        raise NotImplementedError(
            f"pad: {mode} padding of the last {padded_dims} dim(s) needs a "
            f"{padded_dims + 1}-D or {padded_dims + 2}-D input (unbatched or batched), got "
            f"shape {tuple(input.shape)}; constant padding works on any shape")
    if (mode, padded_dims) in _FLOAT32_ON_CPU:
        input, = autocast_inputs(FLOAT32_ON_CPU, input)
    xp = input._device.xp
    picks = tuple((dim, xp.asarray(_positions(mode, input.shape[dim], *amounts[dim], dim)))
                  for dim in range(input.ndim - padded_dims, input.ndim))
    return _INDEX_PADS[mode].apply(input, picks)


# (mode, padded dims) that PyTorch's CPU autocast runs in float32 (its reflection_pad1d/2d and
# replication_pad1d/2d/3d); reflect over 3 dims and circular run in the input's dtype
_FLOAT32_ON_CPU = {("reflect", 1), ("reflect", 2), ("replicate", 1), ("replicate", 2),
                   ("replicate", 3)}


def _amounts(input: Tensor, pad) -> tuple:
    """(before, after) for every dim of `input`, from PyTorch's last-dim-first `pad`."""
    try:
        pad = tuple(int(amount) for amount in pad)
    except (TypeError, ValueError):
        raise TypeError(f"pad: pad must be a sequence of ints, got {pad!r}") from None
    if len(pad) % 2:
        raise RuntimeError(f"pad: the padding length must be even (a before and an after "
                           f"amount per dim), got {len(pad)}: {pad}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: {len(pad)} padding amounts pad {len(pad) // 2} dims, but the "
                           f"input of shape {tuple(input.shape)} has {input.ndim}")
    trailing = [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)][::-1]
    return ((0, 0),) * (input.ndim - len(trailing)) + tuple(trailing)


def _positions(mode: str, n: int, before: int, after: int, dim: int) -> np.ndarray:
    """For each output position along a padded dim, the input position it comes from."""
    if mode == "circular":
        start, stop = max(-before, 0), n - max(-after, 0)
        kept = stop - start
        if max(before, 0) > kept or max(after, 0) > kept:
            raise RuntimeError(f"pad: circular padding ({before}, {after}) of dim {dim} wraps "
                               f"around the {kept} element(s) left more than once")
        offsets = np.arange(kept + max(before, 0) + max(after, 0)) - max(before, 0)
        return start + offsets % kept
    if n == 0:
        raise RuntimeError(f"pad: {mode} padding needs elements to copy, but dim {dim} is empty")
    if mode == "reflect" and (before >= n or after >= n):
        raise RuntimeError(f"pad: reflect padding ({before}, {after}) of dim {dim} must be less "
                           f"than its size {n}")
    positions = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    period = 2 * (n - 1) if n > 1 else 1  # reflect: ... 2 1 [0 1 2 3] 2 1 0 ...
    folded = np.abs(positions) % period
    return np.where(folded < n, folded, period - folded)


METHODS = {}


def _sample(rng, shape, amounts, mode="constant", value=None, layout="contiguous"):
    args = (samples.values(rng, shape), amounts, mode) + ((value,) if value is not None else ())
    return Sample(args, layout=layout, note=f"{shape} {amounts} {mode} {layout}")


OPS = [
    OpInfo("pad", pad, lambda rng: [
        _sample(rng, (2, 3), (1, 2)), _sample(rng, (2, 3, 4), (1, 0, 2, 1), value=1.5),
        _sample(rng, (3, 4), (-1, 2, 1, -1)), _sample(rng, (2, 3, 2), (0, 0, 1, 1, 1, 0)),
        _sample(rng, (4, 3), (2, 1), layout="transposed"),
        _sample(rng, (1, 2, 5), (3, 2), "reflect"), _sample(rng, (2, 4, 3), (2, 1, 1, 3), "reflect"),
        _sample(rng, (2, 5), (-1, 4), "reflect"),
        _sample(rng, (1, 2, 3), (2, 4), "replicate"),
        _sample(rng, (1, 2, 3, 2, 2), (1, 0, 0, 2, 2, 1), "replicate"),
        _sample(rng, (2, 4), (-2, 3), "replicate", layout="strided"),
        _sample(rng, (1, 2, 4), (3, 2), "circular"), _sample(rng, (3, 3, 4), (1, -1, 2, 3), "circular"),
        _sample(rng, (2, 5), (-2, 1), "circular")],
        torch=lambda torch, a, amounts, *args: torch.nn.functional.pad(a, amounts, *args)),
]
