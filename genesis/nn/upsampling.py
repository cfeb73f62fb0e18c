"""Resizing images and signals (`F.interpolate`, `Upsample`): nearest, nearest-exact,
linear, bilinear, bicubic and trilinear (with `align_corners`), and area. Each spatial dim
is resized in turn by picking rows (`index_select`) and, for the interpolating modes,
blending two neighbours (four for bicubic, Keys' cubic convolution with a = -0.75, the
taps clamped at the border), so the gradient is that of index_select and arithmetic. The
sampling positions follow PyTorch's."""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs
from ..creation import tensor
from ..ops.adaptive_pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ..tensor import Tensor
from ._cubic import cubic_coefficients
from .module import Module

__all__ = ["interpolate", "upsample", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

_LINEAR = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_AREA = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """`input` (N, C, *spatial) resized to `size`, or by `scale_factor`.

    >>> import genesis
    >>> x = genesis.tensor([[[1.0, 2.0]]])
    >>> interpolate(x, scale_factor=2).tolist(), interpolate(x, size=3, mode="linear", align_corners=True).tolist()
    ([[[1.0, 1.0, 2.0, 2.0]]], [[[1.0, 1.5, 2.0]]])
    """
    spatial = input.ndim - 2
    if spatial < 1 or spatial > 3:
        raise ValueError(f"interpolate: expected a 3D, 4D or 5D input (N, C, *spatial), got shape "
                         f"{tuple(input.shape)}")
    if mode in _LINEAR and _LINEAR[mode] != spatial:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode] + 2}D input")
    if mode not in ("nearest", "nearest-exact", "area") and mode not in _LINEAR:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported by genesis yet "
                                  "(it has nearest, nearest-exact, linear, bilinear, bicubic, trilinear and area)")
    if align_corners is not None and mode not in _LINEAR:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by genesis yet")
    sizes_in = tuple(input.shape[2:])
    sizes_out, scales = _output_sizes(sizes_in, size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return _AREA[spatial](input, sizes_out)
    out, = autocast_inputs(FLOAT32_ON_CUDA, input)  # CUDA's autocast lists upsample_* as float32
    for k, (extent_in, extent_out, scale) in enumerate(zip(sizes_in, sizes_out, scales)):
        axis = 2 + k
        if mode == "bicubic":
            out = _cubic_along(out, axis, extent_in, extent_out, scale, bool(align_corners))
        elif mode in _LINEAR:
            out = _linear_along(out, axis, extent_in, extent_out, scale, bool(align_corners))
        else:
            out = out.index_select(axis, _nearest(extent_in, extent_out, scale, mode == "nearest-exact",
                                                  input))
    return out


def _output_sizes(sizes_in: tuple, size, scale_factor, recompute: bool | None) -> tuple:
    """(output sizes, the scale per dim that maps an output position back to the input:
    1 / scale_factor when one was given and not recomputed, else in / out)."""
    count = len(sizes_in)
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, tuple | list) else (size,) * count
        if len(sizes) != count:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but "
                             f"got input with spatial dimensions of {list(sizes_in)} and output size "
                             f"of {list(sizes)}.")
        return sizes, tuple(i / o if o else 0.0 for i, o in zip(sizes_in, sizes))
    factors = tuple(scale_factor) if isinstance(scale_factor, tuple | list) else (scale_factor,) * count
    if len(factors) != count:
        raise ValueError(f"scale_factor shape must match input shape: {len(factors)} factors for "
                         f"{count} spatial dims")
    sizes = tuple(math.floor(i * f) for i, f in zip(sizes_in, factors))
    if recompute:
        return sizes, tuple(i / o if o else 0.0 for i, o in zip(sizes_in, sizes))
    return sizes, tuple(1.0 / f for f in factors)


def _index(positions, like: Tensor) -> Tensor:
    return tensor(positions.astype(np.int64), device=like._device)


def _nearest(extent_in: int, extent_out: int, scale: float, exact: bool, like: Tensor) -> Tensor:
    positions = np.arange(extent_out, dtype=np.float64)
    source = np.floor((positions + 0.5) * scale if exact else positions * scale)
    return _index(np.minimum(source, extent_in - 1), like)


def _linear_along(input: Tensor, axis: int, extent_in: int, extent_out: int, scale: float,
                  align_corners: bool) -> Tensor:
    positions = np.arange(extent_out, dtype=np.float64)
    if align_corners:
        source = positions * ((extent_in - 1) / (extent_out - 1)) if extent_out > 1 else positions * 0
    else:
        source = np.maximum((positions + 0.5) * scale - 0.5, 0.0)
    low = np.minimum(np.floor(source), extent_in - 1)
    high = np.minimum(low + 1, extent_in - 1)
    weight_high = (source - low).reshape((-1,) + (1,) * (input.ndim - axis - 1))
    weight_high = tensor(weight_high, dtype=input.dtype, device=input._device)
    near, far = input.index_select(axis, _index(low, input)), input.index_select(axis, _index(high, input))
    return near + (far - near) * weight_high


def _cubic_along(input: Tensor, axis: int, extent_in: int, extent_out: int, scale: float,
                 align_corners: bool) -> Tensor:
    """Bicubic resizing along one axis: four taps around each source position (unclamped,
    as PyTorch's cubic source index), each tap's index clamped into the input."""
    positions = np.arange(extent_out, dtype=np.float64)
    if align_corners:
        source = positions * ((extent_in - 1) / (extent_out - 1)) if extent_out > 1 else positions * 0
    else:
        source = (positions + 0.5) * scale - 0.5
    floor = np.floor(source)
    shape = (-1,) + (1,) * (input.ndim - axis - 1)
    out = None
    for offset, weight in zip(range(-1, 3), cubic_coefficients(source - floor)):
        taps = input.index_select(axis, _index(np.clip(floor + offset, 0, extent_in - 1), input))
        term = taps * tensor(weight.reshape(shape), dtype=input.dtype, device=input._device)
        out = term if out is None else out + term
    return out


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The old name of `interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


class Upsample(Module):
    """`interpolate(input, size, scale_factor, mode, align_corners)` as a module."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        shown = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{shown}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    """Nearest upsampling of (N, C, H, W) inputs."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) inputs, corners aligned."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", align_corners=True)
