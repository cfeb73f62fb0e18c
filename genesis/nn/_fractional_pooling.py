"""Fractional max pooling (Graham, 2014), as PyTorch does it: each (batch, channel) plane gets
pseudo-random window starts from one sample u in [0, 1) per spatial dim (drawn from genesis's
generator unless `_random_samples` gives them): start i = int((i + u) a) - int(u a) with
a = (in - k) / (out - 1), and the last window ends at the input's end.

The maxima are found with the max-pool scan (ties to the first cell, NaN wins) and picked with
`gather`, whose backward adds the gradient at those positions.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..ops._window_kernels import scan_maxima
from ..ops.pooling import check_input
from ..ops.registry import OpInfo, Sample
from ..ops.window import as_tuple
from ..random import generator_for
from ..tensor import Tensor, wrap_array

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

# which column of a plane's random samples drives each spatial dim (PyTorch's kernels)
_SAMPLE_COLUMNS = {2: (1, 0), 3: (0, 1, 2)}  # 2-D: (H, W) use (u[1], u[0]); 3-D: (T, H, W)


def _window_starts(xp, samples, size: int, out: int, kernel: int):
    """PyTorch's generate_intervals, in the samples' dtype: (..., out) starts."""
    dtype = samples.dtype.type
    starts = xp.empty(samples.shape + (out,), xp.int64)
    if out > 1:
        alpha = dtype(size - kernel) / dtype(out - 1)
        steps = xp.arange(out - 1).astype(samples.dtype)
        starts[..., :-1] = ((steps + samples[..., None]) * alpha).astype(xp.int64) \
            - (samples * alpha).astype(xp.int64)[..., None]
    starts[..., -1] = size - kernel
    return starts


def _output_sizes(op: str, dims: int, input: Tensor, kernel: tuple, output_size,
                  output_ratio) -> tuple:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.shape[-dims:])
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, list | tuple) else \
            (output_ratio,) * dims
        if len(ratio) != dims or not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{op}: output_ratio must be a number or {dims} numbers between 0 "
                             f"and 1, got {output_ratio!r}")
        sizes = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        sizes = as_tuple(output_size, dims, "output_size", op)
    for name, n, k, size in zip(("time", "height", "width")[3 - dims:], sizes, kernel, spatial):
        if n + k - 1 > size:
            raise RuntimeError(f"{op}(): pool {name} {k} too large relative to input {name} "
                               f"{size} for an output {name} of {n} (need output + kernel - 1 "
                               "<= input)")
        if n < 1:
            raise RuntimeError(f"{op}(): output {name} must be positive, got {n}")
    return sizes


def _fractional_max_pool(op: str, dims: int, input: Tensor, kernel_size, output_size,
                         output_ratio, return_indices: bool, _random_samples):
    check_input(op, dims, input)
    kernel = as_tuple(kernel_size, dims, "kernel_size", op)
    sizes = _output_sizes(op, dims, input, kernel, output_size, output_ratio)
    xp, device = input._device.xp, input._device
    unbatched = input.ndim == dims + 1
    batch = 1 if unbatched else input.shape[0]
    channels = input.shape[-dims - 1]
    if _random_samples is None:
        samples = generator_for(device).random((batch, channels, dims)).astype(input._data.dtype)
    else:
        samples = _random_samples._data
        if tuple(samples.shape) != (batch, channels, dims):
            raise RuntimeError(f"{op}: _random_samples must have shape {(batch, channels, dims)} "
                               f"(batch, channels, {dims}), got {tuple(samples.shape)}")
    if unbatched:
        samples = samples[0]
    spatial = tuple(input.shape[-dims:])
    starts = [_window_starts(xp, samples[..., column], size, n, k)
              for column, size, n, k in zip(_SAMPLE_COLUMNS[dims], spatial, sizes, kernel)]
    lead = tuple(input.shape[:-dims])
    flat = input._data.reshape(lead + (-1,))
    strides = [math.prod(spatial[d + 1:]) for d in range(dims)]

    def cell(offset):  # flat input position of each output's window cell `offset`
        position = 0
        for d, (start, o) in enumerate(zip(starts, offset)):
            shape = lead + tuple(sizes[e] if e == d else 1 for e in range(dims))
            position = position + ((start + o) * strides[d]).reshape(shape)
        return xp.broadcast_to(position, lead + sizes)

    offsets = list(np.ndindex(*kernel))
    positions = [cell(offset) for offset in offsets]
    parts = (xp.take_along_axis(flat, p.reshape(lead + (-1,)), -1).reshape(p.shape)
             for p in positions)
    _, arg = scan_maxima(xp, parts, len(offsets), track=True, device=device)
    indices = xp.take_along_axis(xp.stack(positions), arg.astype(xp.int64)[None], 0)[0]
    indices = wrap_array(indices, device)
    values = input.flatten(-dims).gather(-1, indices.flatten(-dims)).reshape(indices.shape)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of (N, C, H, W) (or (C, H, W)) to `output_size`, or to
    int(size * output_ratio): kernel_size windows at pseudo-random starts, one draw per plane
    and dim (`_random_samples` (N, C, 2) in [0, 1) fixes them); with `return_indices`, also
    each maximum's flat position in H * W.

    >>> import genesis
    >>> x = genesis.arange(25.).reshape(1, 1, 5, 5)
    >>> genesis.nn.functional.fractional_max_pool2d(x, 2, output_size=2,
    ...     _random_samples=genesis.tensor([[[0.5, 0.5]]]))
    tensor([[[[ 6.,  9.],
              [21., 24.]]]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of (N, C, T, H, W) (or (C, T, H, W)), as
    `fractional_max_pool2d` (`_random_samples` (N, C, 3); indices flat in T * H * W).

    >>> import genesis
    >>> genesis.nn.functional.fractional_max_pool3d(genesis.randn(1, 2, 6, 6, 6), 2,
    ...                                             output_ratio=0.5).shape
    genesis.Size([1, 2, 3, 3, 3])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = True,
                                       _random_samples: Tensor | None = None):
    """`fractional_max_pool2d(..., return_indices=True)`.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> F.fractional_max_pool2d_with_indices(genesis.randn(1, 1, 5, 5), 2, output_size=3)[1].shape
    genesis.Size([1, 1, 3, 3])
    """
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, return_indices,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = True,
                                       _random_samples: Tensor | None = None):
    """`fractional_max_pool3d(..., return_indices=True)`.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> F.fractional_max_pool3d_with_indices(genesis.randn(1, 1, 4, 4, 4), 2, output_size=2)[1].shape
    genesis.Size([1, 1, 2, 2, 2])
    """
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, return_indices,
                                 _random_samples)


def _fractional_samples(dims):
    def build(rng):
        def sample(shape, kernel, output_size=None, output_ratio=None, return_indices=False,
                   layout="contiguous"):
            batch = shape[0] if len(shape) == dims + 2 else 1
            draws = rng.uniform(0, 1, (batch, shape[-dims - 1], dims))
            return Sample((rng.uniform(-2, 2, shape), kernel, output_size, output_ratio,
                           return_indices, draws), grad=(True, False), layout=layout,
                          note=f"{shape} {kernel} {output_size} {output_ratio} {layout}")
        if dims == 2:
            return [sample((2, 3, 7, 9), 2, (4, 3), return_indices=True),
                    sample((2, 2, 8, 6), (3, 2), output_ratio=(0.5, 0.6)),
                    sample((3, 6, 7), 2, 3, layout="transposed")]
        return [sample((1, 2, 6, 5, 7), 2, (3, 2, 4), return_indices=True),
                sample((2, 5, 6, 4), (2, 3, 2), output_ratio=(0.5, 0.5, 0.7), layout="transposed")]
    return build


def _torch_fractional(dims):
    return lambda torch, *args: getattr(torch.nn.functional, f"fractional_max_pool{dims}d")(*args)


OPS = [
    OpInfo("fractional_max_pool2d", fractional_max_pool2d, _fractional_samples(2),
           torch=_torch_fractional(2), kinks="ties within a window"),
    OpInfo("fractional_max_pool3d", fractional_max_pool3d, _fractional_samples(3),
           torch=_torch_fractional(3), kinks="ties within a window"),
]
