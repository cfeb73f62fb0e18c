"""Ops on the matrix structure of the last (or two chosen) dims: triu, tril, diagonal, diag."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dim
from .registry import OpInfo, Sample

__all__ = ["triu", "tril", "diagonal", "diag"]


class _Triangle(Op):
    """One triangle of the last two dims (`part`: "triu" or "tril") from diagonal `k`, the rest
    zero: a projection, so its gradient is the same triangle of the incoming gradient."""

    part = ""

    @staticmethod
    def forward(ctx, a, k):
        ctx.k = k
        return getattr(a._device.xp, type(ctx)._forward_cls.part)(a._data, k)

    @staticmethod
    def backward(ctx, grad):
        return type(ctx)._forward_cls.apply(grad, ctx.k), None


class Triu(_Triangle):
    """Elements on and above diagonal `k` of the last two dims; the rest zero."""

    part = "triu"


class Tril(_Triangle):
    """Elements on and below diagonal `k` of the last two dims; the rest zero."""

    part = "tril"


class Diagonal(Op):
    """Diagonal `offset` of dims (dim1, dim2), as a new last dim (a writable view)."""

    is_view = True

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.shape, ctx.args = a.shape, (offset, dim1, dim2)
        view = a._device.xp.diagonal(a._data, offset, dim1, dim2)
        if isinstance(view, np.ndarray) and a._data.flags.writeable:
            view.flags.writeable = True  # NumPy marks it read-only only for backward compatibility
        return view

    @staticmethod
    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.shape, *ctx.args), None, None, None


class DiagonalScatter(Op):
    """Zeros of `shape` with `values` on a diagonal (the adjoint of `diagonal`)."""

    @staticmethod
    def forward(ctx, values, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = values._device.xp.zeros(shape, values._data.dtype)
        target = values._device.xp.diagonal(out, offset, dim1, dim2)
        if isinstance(target, np.ndarray):
            target.flags.writeable = True
        target[...] = values._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


class DiagEmbed(Op):
    """A square matrix with a 1-D tensor on diagonal `k`."""

    @staticmethod
    def forward(ctx, a, k):
        ctx.k = k
        return a._device.xp.diag(a._data, k)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.k, 0, 1), None


def _require_matrix(op: str, input: Tensor) -> None:
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dims, got shape {tuple(input.shape)}")


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above `diagonal`), the rest zero.

    >>> import genesis
    >>> genesis.ones(3, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.],
            [0., 0., 0.]])
    """
    _require_matrix("triu", input)
    return Triu.apply(input, int(diagonal))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below `diagonal`), the rest zero."""
    _require_matrix("tril", input)
    return Tril.apply(input, int(diagonal))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal `offset` (above the main one if positive) of the matrices in dims
    `dim1`, `dim2`, appended as the last dim; a view.

    >>> import genesis
    >>> genesis.arange(9).reshape(3, 3).diagonal()
    tensor([0, 4, 8])
    """
    _require_matrix("diagonal", input)
    first = normalize_dim(dim1, input.ndim, "diagonal")
    second = normalize_dim(dim2, input.ndim, "diagonal")
    if first == second:
        raise RuntimeError(f"diagonal: dim1 and dim2 can't be the same dim ({dim1}, {dim2})")
    return Diagonal.apply(input, int(offset), first, second)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """From a 1-D tensor: a square matrix with it on `diagonal`. From a 2-D tensor: a copy of
    that diagonal.

    >>> import genesis
    >>> genesis.diag(genesis.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    if input.ndim == 1:
        return DiagEmbed.apply(input, int(diagonal))
    if input.ndim == 2:
        return Diagonal.apply(input, int(diagonal), 0, 1).clone()
    raise RuntimeError(f"diag: input must be 1-D or 2-D, got shape {tuple(input.shape)}")


METHODS = {"triu": triu, "tril": tril, "diagonal": diagonal, "diag": diag}


def _sample(rng, shape, *args, layout="contiguous"):
    return Sample((samples.values(rng, shape),) + args, layout=layout,
                  note=f"{shape} {args} {layout}")


def _triangle_samples(rng):
    return [_sample(rng, (4, 4)), _sample(rng, (3, 5), 1), _sample(rng, (2, 4, 3), -1),
            _sample(rng, (4, 3), 2, layout="transposed"), _sample(rng, (3, 4), -5, layout="strided")]


OPS = [
    OpInfo("triu", triu, _triangle_samples, torch=lambda torch, a, *args: torch.triu(a, *args)),
    OpInfo("tril", tril, _triangle_samples, torch=lambda torch, a, *args: torch.tril(a, *args)),
    OpInfo("diagonal", diagonal, lambda rng: [
        _sample(rng, (4, 4)), _sample(rng, (3, 5), 2), _sample(rng, (3, 5), -1),
        _sample(rng, (2, 3, 4), 0, 2, 0), _sample(rng, (2, 3, 4), 1, -1, -2, layout="transposed"),
        _sample(rng, (2, 3), 5)],
        torch=lambda torch, a, *args: torch.diagonal(a, *args)),
    OpInfo("diag", diag, lambda rng: [
        _sample(rng, (3,)), _sample(rng, (3,), 1), _sample(rng, (3,), -2), _sample(rng, (4, 3)),
        _sample(rng, (3, 4), 1, layout="transposed"), _sample(rng, (4, 2), -1, layout="strided")],
        torch=lambda torch, a, *args: torch.diag(a, *args)),
]
