"""Broadcasting: `expand` and its views. Its adjoint, `sum_to_shape`, the one place broadcasting
is undone, is the engine's (genesis.autograd.unbroadcast)."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..autograd.unbroadcast import broadcast_axes, sum_to_shape
from ..sizes import shape_of
from ..tensor import Tensor
from . import samples
from .registry import OpInfo, Sample

__all__ = ["expand", "broadcast_to", "expand_as", "sum_to_shape", "broadcast_axes"]


def broadcast_view(array, shape: tuple, xp):
    """A read-only view of `array` broadcast to `shape` (no copy)."""
    if xp is not np or not array.flags.c_contiguous:
        return xp.broadcast_to(array, shape)
    # Building the strided view directly costs a fraction of np.broadcast_to's nditer setup.
    lead = len(shape) - array.ndim
    strides = [0] * lead
    for extent, in_extent, in_stride in zip(shape[lead:], array.shape, array.strides):
        strides.append(0 if in_extent == 1 and extent != 1 else in_stride)
    view = np.ndarray(shape, array.dtype, array, 0, tuple(strides))
    view.flags.writeable = False
    return view


class Expand(Op):
    """A read-only broadcast view of `a` with a larger shape."""

    is_view = True

    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        return broadcast_view(a._data, shape, a._device.xp)

    @staticmethod
    def backward(ctx, grad):
        return sum_to_shape(grad, ctx.input_shape), None


def expand(input: Tensor, *sizes) -> Tensor:
    """Broadcast to `sizes` without copying; -1 keeps an existing extent.

    >>> import genesis
    >>> genesis.tensor([[1.], [2.]]).expand(2, 3)
    tensor([[1., 1., 1.],
            [2., 2., 2.]])
    """
    shape = shape_of(sizes, "expand", inferred=True)
    lead = len(shape) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes ({len(shape)}) must be at least the "
                           f"number of dimensions of the tensor ({input.ndim})")
    resolved = []
    for index, extent in enumerate(shape):
        if extent == -1:
            if index < lead:
                raise RuntimeError(f"expand: -1 is not allowed for the new leading dim {index}")
            extent = input.shape[index - lead]
        elif index >= lead and input.shape[index - lead] not in (1, extent):
            raise RuntimeError(
                f"expand: the size {input.shape[index - lead]} of dim {index - lead} of a tensor "
                f"of shape {tuple(input.shape)} can't be expanded to {extent} (target shape {shape}); "
                "only dimensions of size 1 can be expanded")
        resolved.append(extent)
    return Expand.apply(input, tuple(resolved))


def broadcast_to(input: Tensor, shape) -> Tensor:
    """Same as `expand(input, shape)`."""
    return expand(input, tuple(shape))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """Expand to `other`'s shape."""
    return expand(input, other.shape)


METHODS = {"expand": expand, "broadcast_to": broadcast_to, "expand_as": expand_as}


OPS = [
    OpInfo("expand", expand, lambda rng: [
        Sample((samples.values(rng, (3, 1)), (2, 3, 4)), note="new dim and stretch"),
        Sample((samples.values(rng, ()), (2, 2)), note="0-d"),
        Sample((samples.values(rng, (1, 3)), (-1, 3)), note="-1 keeps")],
        torch=lambda torch, a, shape: a.expand(*shape)),
]
