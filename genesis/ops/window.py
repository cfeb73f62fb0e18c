"""Sliding windows over the trailing (spatial) dims: im2col `unfold`, its adjoint `fold`, and
the window geometry and array helpers that convolution and pooling share.

A `Windows` geometry gives, per spatial dim, the kernel extent, stride, dilation and padding
before and after. `unfold` copies every window into a column (PyTorch's layout: (N, C *
prod(kernel), L), L the number of windows); `fold` adds columns back where they came from,
overlapping windows summing. Each is the other's gradient, so gradients of any order work.

>>> import genesis
>>> import genesis.nn.functional as F
>>> x = genesis.arange(9.).reshape(1, 1, 3, 3)
>>> F.unfold(x, kernel_size=2)
tensor([[[0., 1., 3., 4.],
         [1., 2., 4., 5.],
         [3., 4., 6., 7.],
         [4., 5., 7., 8.]]])
>>> F.fold(F.unfold(x, 2), output_size=(3, 3), kernel_size=2)  # centre counted 4 times
tensor([[[[ 0.,  2.,  2.],
          [ 6., 16., 10.],
          [ 6., 14.,  8.]]]])
"""
from __future__ import annotations

import math

from ..autograd.function import Op
from ..tensor import Tensor
from ._window_kernels import add_columns, columns
from .registry import OpInfo, Sample
from .window_geometry import Windows

__all__ = []  # F.unfold / F.fold (genesis.nn.functional); torch has no top-level unfold


class Unfold(Op):
    """Every window of (N, C, *spatial) as a column of (N, C * prod(kernel), L)."""

    @staticmethod
    def forward(ctx, input, windows):
        ctx.spatial, ctx.windows = input.shape[2:], windows
        return columns(input._device, input._data, windows)

    @staticmethod
    def backward(ctx, grad):
        return Fold.apply(grad, ctx.spatial, ctx.windows), None


class Fold(Op):
    """Columns (N, C * prod(kernel), L) summed back into (N, C, *spatial)."""

    @staticmethod
    def forward(ctx, input, spatial, windows):
        ctx.windows = windows
        return add_columns(input._device, input._data, spatial, windows)

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, ctx.windows), None, None


def as_tuple(value, dims: int, name: str, op: str) -> tuple:
    """An int or a sequence of `dims` ints as a tuple, or a clear error."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * dims
    if isinstance(value, list | tuple) and len(value) == dims and all(
            isinstance(item, int) and not isinstance(item, bool) for item in value):
        return tuple(value)
    raise TypeError(f"{op}: {name} must be an int or a tuple of {dims} ints, got {value!r}")


def check_positive(op: str, **values) -> None:
    for name, value in values.items():
        if any(item <= 0 for item in value):
            raise RuntimeError(f"{op}: {name} must be greater than zero, got {value}")


def _window_arguments(op: str, kernel_size, dilation, padding, stride) -> Windows:
    kernel = as_tuple(kernel_size, 2, "kernel_size", op)
    dilation = as_tuple(dilation, 2, "dilation", op)
    stride = as_tuple(stride, 2, "stride", op)
    padding = as_tuple(padding, 2, "padding", op)
    check_positive(op, kernel_size=kernel, dilation=dilation, stride=stride)
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}: padding must be non-negative, got {padding}")
    return Windows(kernel, stride, dilation, tuple((p, p) for p in padding))


def _batched(op: str, input: Tensor, ndim: int, layout: str) -> bool:
    """Whether `input` has its batch dim (ndim) or not (ndim - 1); anything else is an error."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (ndim - 1, ndim):
        raise RuntimeError(f"{op}: expected a {ndim - 1}-D (unbatched) or {ndim}-D (batched) "
                           f"input of shape {layout}, got shape {tuple(input.shape)}")
    return input.ndim == ndim


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L), L the number of
    blocks; unbatched (C, H, W) gives (C * kh * kw, L). As torch.nn.functional.unfold.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.unfold(genesis.ones(2, 3, 4, 4), kernel_size=3, padding=1).shape
    genesis.Size([2, 27, 16])
    """
    batched = _batched("unfold", input, 4, "(N, C, H, W)")
    windows = _window_arguments("unfold", kernel_size, dilation, padding, stride)
    source = input if batched else input.unsqueeze(0)
    spatial = source.shape[2:]
    out_size = windows.output_size(spatial)
    if any(n < 1 for n in out_size):
        raise RuntimeError(
            f"unfold: input of shape {tuple(input.shape)} padded to "
            f"{windows.padded_size(spatial)} is smaller than the dilated kernel {windows.span} "
            f"(kernel_size={windows.kernel}, dilation={windows.dilation}); use a smaller kernel "
            "or more padding")
    out = Unfold.apply(source, windows)
    return out if batched else out.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum sliding blocks back into an image (col2im), the adjoint of `unfold`:
    (N, C * kh * kw, L) -> (N, C, *output_size). As torch.nn.functional.fold.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.fold(genesis.ones(1, 4, 4), output_size=(3, 3), kernel_size=2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    batched = _batched("fold", input, 3, "(N, C * prod(kernel_size), L)")
    windows = _window_arguments("fold", kernel_size, dilation, padding, stride)
    spatial = as_tuple(output_size, 2, "output_size", "fold")
    source = input if batched else input.unsqueeze(0)
    if source.shape[1] % windows.count:
        raise RuntimeError(f"fold: input of shape {tuple(input.shape)} has {source.shape[1]} rows, "
                           f"not a multiple of prod(kernel_size) = {windows.count} (kernel_size="
                           f"{windows.kernel})")
    blocks = math.prod(windows.output_size(spatial))
    if source.shape[2] != blocks or blocks < 1:
        padding = tuple(before for before, _ in windows.padding)
        raise RuntimeError(f"fold: input of shape {tuple(input.shape)} has {source.shape[2]} "
                           f"blocks, but output_size={spatial} with kernel_size={windows.kernel}, "
                           f"dilation={windows.dilation}, padding={padding}, stride="
                           f"{windows.stride} makes {blocks}")
    out = Fold.apply(source, spatial, windows)
    return out if batched else out.squeeze(0)


METHODS = {}


def _unfold_samples(rng):
    def make(shape, *args, layout="contiguous", grad=None, **kwargs):
        return Sample((rng.uniform(-2, 2, shape),) + args, kwargs, grad=grad, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return [make((2, 2, 4, 5), 3), make((1, 3, 5, 5), (2, 3), padding=1, stride=2),
            make((1, 2, 6, 5), 2, dilation=(2, 1), padding=(1, 0)),
            make((2, 2, 4, 4), 2, layout="transposed"), make((2, 4, 4), 3, padding=1),
            make((1, 1, 3, 3), 2, grad=(False,))]


def _fold_samples(rng):
    def make(shape, output_size, *args, layout="contiguous", **kwargs):
        return Sample((rng.uniform(-2, 2, shape), output_size) + args, kwargs, layout=layout,
                      note=f"{shape} -> {output_size} {args} {kwargs} {layout}")

    return [make((2, 18, 8), (3, 4), 3, padding=1, stride=(2, 1)), make((1, 8, 9), (4, 4), 2),
            make((2, 4, 4), (4, 3), (2, 2), dilation=(2, 1)),
            make((2, 12, 4), (4, 5), (2, 3), stride=2, layout="transposed"),
            make((8, 9), (4, 4), 2)]


OPS = [
    OpInfo("unfold", unfold, _unfold_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.unfold(*args, **kw)),
    OpInfo("fold", fold, _fold_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.fold(*args, **kw)),
]
