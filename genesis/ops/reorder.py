"""Copies that move or repeat elements: flip, roll, repeat, tile."""
from __future__ import annotations

from ..autograd.function import Op
from ..sizes import integers
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dim
from .registry import OpInfo, Sample

__all__ = ["flip", "roll", "tile"]


class Flip(Op):
    """The elements in reverse order along `dims` (a copy, as in PyTorch)."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._device.xp.flip(a._data, axis=dims).copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


class Roll(Op):
    """Elements shifted cyclically along `dims` (over the flattened tensor when None)."""

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return a._device.xp.roll(a._data, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        shifts = ctx.shifts
        back = -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)
        return Roll.apply(grad, back, ctx.dims), None, None


class Repeat(Op):
    """The tensor tiled `repeats[i]` times along each dim (leading dims added as needed)."""

    @staticmethod
    def forward(ctx, a, repeats):
        ctx.shape, ctx.repeats = a.shape, repeats
        return a._device.xp.tile(a._data, repeats)

    @staticmethod
    def backward(ctx, grad):
        repeats = ctx.repeats
        padded = (1,) * (len(repeats) - len(ctx.shape)) + ctx.shape
        interleaved = tuple(extent for pair in zip(repeats, padded) for extent in pair)
        summed = grad.reshape(interleaved).sum(dim=tuple(range(0, 2 * len(repeats), 2)))
        return summed.reshape(ctx.shape), None


def _int_tuple(values, op: str, what: str) -> tuple:
    if len(values) == 1 and isinstance(values[0], tuple | list):
        values = values[0]
    return integers(values, f"{what} must be ints, got", op)


def flip(input: Tensor, dims) -> Tensor:
    """Reverse the order of elements along `dims` (an int or a sequence); a copy.

    >>> import genesis
    >>> genesis.tensor([[1, 2], [3, 4]]).flip(1)
    tensor([[2, 1],
            [4, 3]])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    normalized = tuple(normalize_dim(d, input.ndim, "flip") for d in dims)
    if len(set(normalized)) != len(normalized):
        raise RuntimeError(f"flip: dims {dims} name a dim more than once")
    if input.ndim == 0:
        return Flip.apply(input, ())
    return Flip.apply(input, normalized)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements cyclically by `shifts` along `dims` (ints or equal-length sequences);
    with no dims, roll the flattened tensor and restore the shape.

    >>> import genesis
    >>> genesis.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    if dims is None:
        if not isinstance(shifts, int):
            raise RuntimeError(f"roll: without dims, shifts must be one int, got {shifts}")
        return Roll.apply(input, shifts, None)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must have the same length")
    dims = tuple(normalize_dim(d, input.ndim, "roll") for d in dims)
    if input.ndim == 0:
        return Roll.apply(input, 0, None)
    return Roll.apply(input, shifts, dims)


def repeat(input: Tensor, *repeats) -> Tensor:
    """Tile the tensor `repeats[i]` times along dim i (PyTorch's `Tensor.repeat`, NumPy's
    tile); there must be at least as many repeats as dims, extra ones add leading dims.

    >>> import genesis
    >>> genesis.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    repeats = _int_tuple(repeats, "repeat", "repeats")
    if len(repeats) < input.ndim:
        raise RuntimeError(f"repeat: the number of repeats ({len(repeats)}) can't be smaller than "
                           f"the number of dims ({input.ndim}) of the tensor of shape "
                           f"{tuple(input.shape)}; use tile to pad repeats with ones")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"repeat: repeats must be non-negative, got {repeats}")
    return Repeat.apply(input, repeats)


def tile(input: Tensor, dims) -> Tensor:
    """Like `repeat`, but `dims` may be shorter than the tensor's dims (padded with ones
    on the left).

    >>> import genesis
    >>> genesis.tensor([[1, 2]]).tile((2,))
    tensor([[1, 2, 1, 2]])
    """
    dims = _int_tuple((dims,), "tile", "dims")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


METHODS = {"flip": flip, "roll": roll, "repeat": repeat, "tile": tile}


def _sample(rng, shape, *args, layout="contiguous"):
    return Sample((samples.values(rng, shape),) + args, layout=layout,
                  note=f"{shape} {args} {layout}")


OPS = [
    OpInfo("flip", flip, lambda rng: [
        _sample(rng, (3, 4), 0), _sample(rng, (2, 3, 4), (0, 2)),
        _sample(rng, (3, 4), (-1,), layout="transposed"),
        _sample(rng, (), ()), _sample(rng, (0, 3), 1)],
        torch=lambda torch, a, dims: torch.flip(a, (dims,) if isinstance(dims, int) else dims)),
    OpInfo("roll", roll, lambda rng: [
        _sample(rng, (3, 4), 1), _sample(rng, (3, 4), -5, 1), _sample(rng, (3, 4), (1, 2), (0, 1)),
        _sample(rng, (4, 3), 2, 0, layout="transposed"), _sample(rng, (2, 5), 3, -1, layout="strided")],
        torch=lambda torch, a, *args: torch.roll(a, *args)),
    OpInfo("repeat", repeat, lambda rng: [
        _sample(rng, (2, 3), (2, 1)), _sample(rng, (2, 3), (3, 1, 2)), _sample(rng, (), (2,)),
        _sample(rng, (3, 2), (2, 2), layout="transposed"), _sample(rng, (2, 3), (0, 1))],
        torch=lambda torch, a, repeats: a.repeat(*repeats)),
    OpInfo("tile", tile, lambda rng: [
        _sample(rng, (2, 3), (2,)), _sample(rng, (2, 3), (2, 1, 2)), _sample(rng, (4,), (3,))],
        torch=lambda torch, a, dims: torch.tile(a, dims)),
]
