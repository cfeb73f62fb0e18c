"""Adaptive pooling: average or max over windows chosen to give a fixed output size, as
PyTorch chooses them (window i of n over a size S covers [floor(i S / n), ceil((i + 1) S / n))).

Average pooling is one averaging matrix per spatial dim (a linear map, so its backward is
the transposed matrices and differentiable again). Max pooling gathers each window's cells
(short windows repeat their last cell), takes the max with the same scan as max_pool2d
(ties to the first cell, NaN wins), then picks the values with `gather`, whose backward
adds the gradient at those positions.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from ._window_kernels import scan_maxima
from .pooling import check_input, pool_sample, torch_pool
from .registry import OpInfo

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d"]  # those torch has at top level too


def adaptive_ranges(size: int, out: int) -> tuple:
    """PyTorch's adaptive windows: window i covers [floor(i * size / out), ceil((i + 1) *
    size / out))."""
    index = np.arange(out)
    return index * size // out, -(-(index + 1) * size // out)


def _output_size(op: str, dims: int, input: Tensor, output_size) -> tuple:
    check_input(op, dims, input)
    if output_size is None or isinstance(output_size, int):
        output_size = (output_size,) * dims
    if not isinstance(output_size, list | tuple) or len(output_size) != dims:
        raise TypeError(f"{op}: output_size must be an int or a tuple of {dims} ints (None keeps "
                        f"the input's size), got {output_size!r}")
    sizes = tuple(input.shape[-dims + i] if n is None else n for i, n in enumerate(output_size))
    if any(not isinstance(n, int) or n < 1 for n in sizes):
        raise RuntimeError(f"{op}: output_size must be positive, got {tuple(output_size)}")
    return sizes


class AdaptiveAvgPool(Op):
    """Adaptive average pooling as one averaging matrix A (out, in) per spatial dim:
    x @ A^T for 1-D, A_h @ x @ A_w^T for 2-D, and for 3-D A_d applied over the depth of the
    2-D result (flattened to (..., D, H' W'))."""

    @staticmethod
    def forward(ctx, input, matrices):
        ctx.matrices = matrices
        out = input._data @ matrices[-1]._data.T
        if len(matrices) >= 2:
            out = matrices[-2]._data @ out
        if len(matrices) == 3:
            shape = out.shape
            out = (matrices[0]._data @ out.reshape(shape[:-2] + (-1,))).reshape(
                shape[:-3] + (matrices[0].shape[0],) + shape[-2:])
        return out

    @staticmethod
    def backward(ctx, grad):
        matrices = ctx.matrices
        if len(matrices) == 3:
            shape = grad.shape
            grad = (matrices[0].mT @ grad.reshape(shape[:-2] + (-1,))).reshape(
                shape[:-3] + (matrices[0].shape[1],) + shape[-2:])
        grad = grad @ matrices[-1]
        return (matrices[-2].mT @ grad if len(matrices) >= 2 else grad), None


def _averaging_matrix(xp, size: int, out: int, dtype):
    start, end = adaptive_ranges(size, out)
    columns = np.arange(size)
    inside = (columns >= start[:, None]) & (columns < end[:, None])
    return xp.asarray(inside / (end - start)[:, None]).astype(dtype)


def _adaptive_avg_pool(op: str, dims: int, input: Tensor, output_size) -> Tensor:
    sizes = _output_size(op, dims, input, output_size)
    if not input.is_floating_point():
        raise RuntimeError(f"{op}: input must be floating point, got {input.dtype.name}; "
                           "convert it with .float()")
    xp = input._device.xp
    matrices = tuple(wrap_array(_averaging_matrix(xp, size, n, input._data.dtype), input._device)
                     for size, n in zip(input.shape[-dims:], sizes))
    return AdaptiveAvgPool.apply(input, matrices)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, L) to (N, C, output_size), windows chosen as in PyTorch.

    >>> import genesis
    >>> genesis.nn.functional.adaptive_avg_pool1d(genesis.tensor([[[1., 2., 3., 4., 5.]]]), 2)
    tensor([[[2., 4.]]])
    """
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, H, W) to (N, C, *output_size); an entry None keeps that
    input size. Window i of n over a size S covers [floor(i S / n), ceil((i + 1) S / n)).

    >>> import genesis
    >>> genesis.nn.functional.adaptive_avg_pool2d(genesis.ones(8, 64, 7, 7), 1).shape
    genesis.Size([8, 64, 1, 1])
    """
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def _adaptive_max_pool(op: str, dims: int, input: Tensor, output_size, return_indices: bool):
    """Gather each adaptive window's cells (short windows repeat their last cell, which never
    wins a tie), take PyTorch's scan maximum, then pick the values with `gather` (its backward
    adds the gradient at those positions)."""
    sizes = _output_size(op, dims, input, output_size)
    xp = input._device.xp
    spatial = tuple(input.shape[-dims:])
    key, cells = [Ellipsis], []
    for dim, (size, n) in enumerate(zip(spatial, sizes)):
        start, end = adaptive_ranges(size, n)
        longest = int((end - start).max())
        cell = np.minimum(start[:, None] + np.arange(longest), end[:, None] - 1)
        cells.append(cell)
        key.append(xp.asarray(cell.reshape(cell.shape + (1, 1) * (dims - dim - 1))))
    gathered = input._data[tuple(key)]  # (..., n1, k1, n2, k2)
    kernel = tuple(cell.shape[1] for cell in cells)
    parts = (gathered[(...,) + tuple(x for o in offset for x in (slice(None), o))]
             for offset in np.ndindex(*kernel))
    _, arg = scan_maxima(xp, parts, math.prod(kernel), track=True, device=input._device)
    coords = xp.unravel_index(arg.astype(xp.int64), kernel)
    flat = 0
    for dim, (cell, coord) in enumerate(zip(cells, coords)):
        rows = xp.arange(sizes[dim]).reshape((-1,) + (1,) * (dims - dim - 1))
        flat = flat * spatial[dim] + xp.asarray(cell)[rows, coord]
    indices = wrap_array(flat, input._device)
    values = input.flatten(-dims).gather(-1, indices.flatten(-dims)).reshape(indices.shape)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, L) to (N, C, output_size) over PyTorch's adaptive windows.

    >>> import genesis
    >>> genesis.nn.functional.adaptive_max_pool1d(genesis.tensor([[[1., 5., 2., 4., 3.]]]), 2)
    tensor([[[5., 4.]]])
    """
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, H, W) to (N, C, *output_size) over PyTorch's adaptive windows;
    with `return_indices`, also each maximum's flat position in H * W.

    >>> import genesis
    >>> genesis.nn.functional.adaptive_max_pool2d(genesis.arange(16.).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, D, H, W) to (N, C, *output_size), windows as in PyTorch.

    >>> import genesis
    >>> genesis.nn.functional.adaptive_avg_pool3d(genesis.ones(2, 3, 4, 5, 6), (2, 1, 3)).shape
    genesis.Size([2, 3, 2, 1, 3])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) to (N, C, *output_size) over PyTorch's adaptive windows;
    with `return_indices`, also each maximum's flat position in D * H * W."""
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


METHODS = {}


def _adaptive_samples(dims, indices=False):
    def build(rng):
        shape = {1: (2, 3, 7), 2: (2, 2, 5, 7), 3: (2, 2, 3, 5, 4)}[dims]
        sizes = {1: [3, 1, 7], 2: [(2, 3), 1, (None, 2), (5, 7)],
                 3: [(2, 3, 3), 1, (None, 2, None), (3, 5, 4)]}[dims]
        extra = {"return_indices": True} if indices else {}
        return ([pool_sample(rng, shape, size) for size in sizes]
                + [pool_sample(rng, shape[1:], sizes[0], **extra),
                   pool_sample(rng, shape, sizes[0], layout="transposed", **extra)])
    return build


OPS = [
    OpInfo("adaptive_avg_pool1d", adaptive_avg_pool1d, _adaptive_samples(1),
           torch=torch_pool("adaptive_avg_pool1d")),
    OpInfo("adaptive_avg_pool2d", adaptive_avg_pool2d, _adaptive_samples(2),
           torch=torch_pool("adaptive_avg_pool2d")),
    OpInfo("adaptive_max_pool1d", adaptive_max_pool1d, _adaptive_samples(1, indices=True),
           torch=torch_pool("adaptive_max_pool1d"), kinks="ties within a window"),
    OpInfo("adaptive_max_pool2d", adaptive_max_pool2d, _adaptive_samples(2, indices=True),
           torch=torch_pool("adaptive_max_pool2d"), kinks="ties within a window"),
    OpInfo("adaptive_avg_pool3d", adaptive_avg_pool3d, _adaptive_samples(3),
           torch=torch_pool("adaptive_avg_pool3d")),
    OpInfo("adaptive_max_pool3d", adaptive_max_pool3d, _adaptive_samples(3, indices=True),
           torch=torch_pool("adaptive_max_pool3d"), kinks="ties within a window"),
]
