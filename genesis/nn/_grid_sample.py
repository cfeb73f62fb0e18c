"""Spatial transformers: `affine_grid` (a batch of affine maps applied to the normalised pixel
grid) and `grid_sample` (the input read at the grid's points), with PyTorch's coordinate rules.

Both are compositions of genesis ops, so their gradients (w.r.t. theta, input and grid) and
double backward are those ops'. grid_sample reads every corner (tap) of each point with one
`gather` per corner over the flattened spatial dims, and weights it by the interpolation
coefficient, which is a function of the grid; corners outside the input read zero.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autocast_rules import AutocastRule
from ..autograd.autocast_casts import autocast_inputs
from ..ops.gather import gather
from ..ops.registry import OpInfo, Sample
from ..ops.where import where
from ..tensor import Tensor, wrap_array
from ._cubic import cubic_coefficients

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")

# PyTorch promotes grid_sampler's operands under CUDA's autocast and runs it in float32 under
# the CPU's
_GRID_SAMPLER = AutocastRule(cuda="promote", cpu="float32")


def _steps(xp, count: int, align_corners: bool, dtype):
    """The normalised centres of `count` pixels: -1 ... 1 (corner pixels' centres when
    `align_corners`, else the image's edges shrunk by half a pixel); 0 for one pixel."""
    if count <= 1:
        return xp.zeros(count, dtype)
    # PyTorch's linspace, in the grid's own dtype: from -1 up to the middle, from 1 down after
    # it, so the points (and the rounding of the ones on pixel centres) are exactly its own
    dtype = np.dtype(dtype)
    step = dtype.type(2.0) / dtype.type(count - 1)
    index = np.arange(count)
    steps = np.where(index < count // 2, dtype.type(-1.0) + step * index.astype(dtype),
                     dtype.type(1.0) - step * (count - 1 - index).astype(dtype)).astype(dtype)
    if not align_corners:
        steps = steps * dtype.type(count - 1) / dtype.type(count)
    return xp.asarray(steps)


def _default_align_corners(align_corners, op: str) -> bool:
    if align_corners is None:
        warnings.warn(f"{op}: the default align_corners is False (PyTorch's since 1.3.0); pass "
                      "align_corners=True for the old behaviour", UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: theta (N, 2, 3) and size (N, C, H, W) give
    (N, H, W, 2) points (x, y) = theta @ (x', y', 1) over the output's normalised pixel
    centres (x', y'); theta (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W, 3).

    >>> import genesis
    >>> identity = genesis.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> genesis.nn.functional.affine_grid(identity, (1, 1, 2, 2), align_corners=True)[0]
    tensor([[[-1., -1.],
             [ 1., -1.]],
    <BLANKLINE>
            [[-1.,  1.],
             [ 1.,  1.]]])
    """
    align_corners = _default_align_corners(align_corners, "affine_grid")
    if not isinstance(theta, Tensor) or not theta.is_floating_point():
        raise ValueError(f"affine_grid: expected theta to be a floating point Tensor, got "
                         f"{getattr(theta, 'dtype', type(theta).__name__)}")
    size = tuple(int(n) for n in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    dims = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (dims, dims + 1):
        raise ValueError(f"affine_grid: expected a batch of {dims}D affine matrices of shape "
                         f"Nx{dims}x{dims + 1} for size {size}, got {tuple(theta.shape)}")
    if min(size) <= 0:
        raise ValueError(f"affine_grid: expected non-zero, positive output size, got {size}")
    xp, dtype = theta._device.xp, theta._data.dtype
    spatial = size[2:]
    axes = [_steps(xp, n, align_corners, dtype) for n in reversed(spatial)]  # x, y (, z)
    mesh = xp.meshgrid(*reversed(axes), indexing="ij")  # over (D,) H, W
    base = xp.stack([m for m in reversed(mesh)] + [xp.ones(spatial, dtype)], axis=-1)
    base = wrap_array(base.reshape(1, -1, dims + 1), theta._device)
    return (base @ theta.mT).reshape((size[0],) + spatial + (dims,))


def _reflect(coordinate: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """PyTorch's reflect_coordinates: `coordinate` mirrored at low and high until inside."""
    if twice_low == twice_high:
        return coordinate * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coordinate - low).abs()
    flips = (distance / span).floor().detach()
    extra = distance - flips * span
    even = wrap_array(flips._data % 2 == 0, coordinate._device)
    return where(even, extra + low, span - extra + low)


def _padded(coordinate: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """PyTorch's compute_coordinates: the source coordinate after border clamping or
    reflection (zeros padding leaves it, the out-of-range corners reading zero)."""
    if padding_mode == "reflection":
        coordinate = _reflect(coordinate, 0, 2 * (size - 1)) if align_corners else \
            _reflect(coordinate, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        # PyTorch's clip_coordinates_set_grad: points on the edges count as outside, so the
        # clamp passes no gradient there (a plain clamp would, and the point's out-of-range
        # corner, which reads zero, would then add a slope the padded image does not have)
        inside = wrap_array((coordinate._data > 0) & (coordinate._data < size - 1),
                            coordinate._device)
        coordinate = where(inside, coordinate, coordinate.clamp(0, size - 1).detach())
    return coordinate


def _check_grid_sample(input, grid, mode: str, padding_mode: str) -> int:
    if mode not in _MODES:
        raise ValueError(f"grid_sample: expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: {mode!r}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"grid_sample: expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: {padding_mode!r}")
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError(f"grid_sample: input and grid must be Tensors, got "
                        f"{type(input).__name__} and {type(grid).__name__}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample: expected a 4-D input (N, C, H, W) with a grid "
                           f"(N, H_out, W_out, 2), or a 5-D input with a grid (N, D_out, H_out, "
                           f"W_out, 3), of the same batch size; got input {tuple(input.shape)} "
                           f"and grid {tuple(grid.shape)}")
    dims = input.ndim - 2
    if grid.shape[-1] != dims:
        raise RuntimeError(f"grid_sample: expected grid to have size {dims} in last dimension, "
                           f"but got grid with sizes {tuple(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sample: input and grid must have the same dtype, got "
                           f"{input.dtype.name} and {grid.dtype.name}; cast one (e.g. "
                           "grid.to(input.dtype))")
    if mode == "bicubic" and dims != 2:
        raise RuntimeError("grid_sample: bicubic interpolation only supports 4D input")
    return dims


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """The input (N, C, H, W) read at the grid's points (N, H_out, W_out, 2), each an (x, y) in
    [-1, 1] (x along W); 5-D inputs take (N, D_out, H_out, W_out, 3) grids. `mode`:
    'bilinear' (trilinear for 5-D), 'nearest' or 'bicubic' (4-D only); `padding_mode`: what
    points outside read ('zeros', the 'border' value or the 'reflection'). Differentiable
    w.r.t. input and grid (for 'nearest' the grid's gradient is zero, as PyTorch's).

    >>> import genesis
    >>> image = genesis.arange(4.).reshape(1, 1, 2, 2)
    >>> grid = genesis.tensor([[[[0., 0.], [-1., -1.]]]])
    >>> genesis.nn.functional.grid_sample(image, grid, align_corners=True)
    tensor([[[[1.5000, 0.0000]]]])
    """
    input, grid = autocast_inputs(_GRID_SAMPLER, input, grid)
    align_corners = _default_align_corners(align_corners, "grid_sample")
    dims = _check_grid_sample(input, grid, mode, padding_mode)
    xp, device = input._device.xp, input._device
    spatial = tuple(input.shape[2:])
    batch, channels = input.shape[:2]
    points = tuple(grid.shape[1:-1])
    # source coordinates per spatial dim (D,) H, W: grid's last entry is x (along W)
    coordinates = []
    for d, size in enumerate(spatial):
        normalised = grid[..., dims - 1 - d]
        coordinate = ((normalised + 1) / 2) * (size - 1) if align_corners else \
            ((normalised + 1) * size - 1) / 2
        coordinates.append(coordinate if mode == "bicubic" else
                           _padded(coordinate, size, padding_mode, align_corners))
    taps = _taps(xp, coordinates, spatial, mode, padding_mode, align_corners)
    flat = input.reshape(batch, channels, -1)
    out = None
    for index, weight in taps:
        index_data = xp.broadcast_to(index.reshape(batch, 1, -1),
                                     (batch, channels, math.prod(points)))
        values = gather(flat, 2, wrap_array(xp.ascontiguousarray(index_data), device))
        term = values * weight.reshape(batch, 1, -1)
        out = term if out is None else out + term
    out = out.reshape((batch, channels) + points)
    if mode == "nearest" and grid.requires_grad:  # the grid's gradient is zero, as PyTorch's:
        everywhere = wrap_array(xp.ones(out.shape, bool), device)  # kept in the graph
        out = where(everywhere, out, grid[..., 0].unsqueeze(1))
    return out


def _taps(xp, coordinates: list, spatial: tuple, mode: str, padding_mode: str,
          align_corners: bool) -> list:
    """(flat index array, weight Tensor) for each corner a point reads: weights are zero where
    the corner is outside the input, and their indices are clipped inside."""
    device = coordinates[0]._device
    dtype = coordinates[0]._data.dtype
    if mode == "nearest":
        corners = [[(xp.rint(c._data), None)] for c in coordinates]
    elif mode == "bilinear":
        corners = []
        for c in coordinates:
            low = c.floor().detach()
            corners.append([(low._data, low + 1 - c), (low._data + 1, c - low)])
    else:
        corners = []
        for c, size in zip(coordinates, spatial):
            low = c.floor().detach()
            weights = cubic_coefficients(c - low)
            column = []
            for offset, weight in zip((-1, 0, 1, 2), weights):
                tap = _padded(low + offset, size, padding_mode, align_corners)
                column.append((tap._data, weight))
            corners.append(column)
    taps = []
    for choice in np.ndindex(*(len(column) for column in corners)):
        index, inside, weight = 0, True, None
        for d, (k, size) in enumerate(zip(choice, spatial)):
            position, factor = corners[d][k]
            inside = inside & (position >= 0) & (position <= size - 1)
            index = index * size + xp.clip(position, 0, size - 1).astype(xp.int64)
            if factor is not None:
                weight = factor if weight is None else weight * factor
        mask = wrap_array(inside.astype(dtype), device)
        taps.append((index, mask if weight is None else weight * mask))
    return taps


def _affine_grid_samples(rng):
    return [Sample((rng.standard_normal((2, 2, 3)), (2, 3, 4, 5), False)),
            Sample((rng.standard_normal((2, 2, 3)), (2, 1, 3, 2), True), layout="transposed"),
            Sample((rng.standard_normal((1, 3, 4)), (1, 2, 2, 3, 4), False))]


def _grid_sample_samples(rng):
    def sample(shape, points, *args, grad=None, layout="contiguous"):
        grid = rng.uniform(-1.3, 1.3, (shape[0],) + points + (len(shape) - 2,))
        return Sample((rng.standard_normal(shape), grid) + args, grad=grad, layout=layout,
                      note=f"{shape} {points} {args} {layout}")
    return [sample((2, 3, 4, 5), (3, 2), "bilinear", "zeros", False),
            sample((1, 2, 3, 4), (2, 3), "bilinear", "border", True, layout="transposed"),
            sample((2, 2, 4, 4), (3, 3), "bilinear", "reflection", False, grad=(False, True)),
            sample((1, 2, 4, 5), (2, 2), "bilinear", "reflection", True, grad=(True, False)),
            sample((1, 2, 4, 5), (3, 2), "bicubic", "zeros", False),
            sample((1, 1, 4, 4), (2, 2), "bicubic", "reflection", True),
            sample((2, 2, 3, 4), (2, 3), "nearest", "border", False, grad=(True, False)),
            sample((1, 2, 3, 4, 3), (2, 2, 2), "bilinear", "zeros", True),
            sample((1, 1, 3, 3, 4), (2, 1, 2), "bilinear", "reflection", False,
                   layout="transposed")]


OPS = [
    OpInfo("affine_grid", affine_grid, _affine_grid_samples,
           torch=lambda torch, *args, **kwargs: torch.nn.functional.affine_grid(*args, **kwargs)),
    OpInfo("grid_sample", grid_sample, _grid_sample_samples,
           torch=lambda torch, *args, **kwargs: torch.nn.functional.grid_sample(*args, **kwargs),
           kinks="grid points on pixel boundaries (and on the edges, for border/reflection)"),
]
