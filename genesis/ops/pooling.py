"""Pooling: max and average over sliding windows of the trailing 1, 2 or 3 dims (adaptive
pooling is in adaptive_pooling.py).

Max and average pooling walk the positions of a window (at most a few) and
combine the matching strided slices of the padded input, so no window is
copied. Max pooling follows PyTorch's scan: a later value wins only if larger
or NaN, so ties go to the first position and NaN propagates. Its gradient goes
to the chosen position (summed where windows overlap). Each pooling op's
backward is its adjoint as another Function whose own backward is the op
again, so gradients of any order work.
"""
from __future__ import annotations

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..autograd.engine import grad
from ..autograd.function import Op
from ..tensor import Tensor
from ._select import zero_unless
from ._window_kernels import (average, finite_unless_cheap, max_scan, max_scatter, padded, spread,
                              window_maxima)
from .registry import OpInfo, Sample
from .window import as_tuple, check_positive
from .window_geometry import Windows

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d"]  # torch's top-level ones


def input_positions(xp, arg, windows: Windows, spatial: tuple, out_size: tuple):
    """PyTorch's max-pool indices: the flat position in the (unpadded) spatial dims."""
    coords = xp.unravel_index(arg.astype(xp.int64), windows.kernel)
    flat = 0
    for dim, (coord, size, (before, _), s, d) in enumerate(zip(
            coords, spatial, windows.padding, windows.stride, windows.dilation)):
        start = (xp.arange(out_size[dim]) * s - before).reshape(
            (-1,) + (1,) * (len(spatial) - dim - 1))
        flat = flat * size + start + coord * d
    return flat


class MaxPool(Op):
    """Max over each window; with `return_indices`, also where it came from."""

    @staticmethod
    def forward(ctx, input, windows, return_indices):
        xp = input._device.xp
        data = input._data
        low = -xp.inf if data.dtype in FLOATING_NUMPY_DTYPES else xp.iinfo(data.dtype).min
        spatial = data.shape[data.ndim - len(windows.kernel):]
        out_size = windows.output_size(spatial)
        track = return_indices or ctx.needs_input_grad[0]
        if track:
            best, arg = max_scan(input._device, data, windows, low)
        else:  # the maxima alone (on a GPU the fused scan is as cheap)
            best, arg = window_maxima(xp, padded(xp, data, windows, low), windows, out_size,
                                      False, input._device)
        ctx.arg, ctx.spatial, ctx.windows = arg, spatial, windows
        if not return_indices:
            return best
        return best, input_positions(xp, arg, windows, spatial, out_size)

    @staticmethod
    def backward(ctx, grad, *unused):
        return MaxPoolScatter.apply(grad, ctx.arg, ctx.spatial, ctx.windows), None, None


class MaxPoolScatter(Op):
    """Each value added at the input position its window's maximum came from."""

    @staticmethod
    def forward(ctx, values, arg, spatial, windows):
        ctx.arg, ctx.windows = arg, windows
        return max_scatter(values._device, values._data, arg, spatial, windows)

    @staticmethod
    def backward(ctx, grad):
        return MaxPoolGather.apply(grad, ctx.arg, ctx.windows), None, None, None


class MaxPoolGather(Op):
    """For each window, the value of `input` at its recorded maximum's position."""

    @staticmethod
    def forward(ctx, input, arg, windows):
        ctx.arg, ctx.windows = arg, windows
        xp = input._device.xp
        data = input._data
        ctx.spatial = data.shape[data.ndim - len(windows.kernel):]
        source = padded(xp, data, windows)
        out = xp.zeros(arg.shape, data.dtype)
        cheap, finite = finite_unless_cheap(xp, input._device, data)
        out_size = arg.shape[arg.ndim - len(ctx.spatial):]
        for number, offset in windows.offsets():
            out += zero_unless(xp, source[(..., *windows.slices(offset, out_size))],
                               arg == number, finite, cheap)
        return out

    @staticmethod
    def backward(ctx, grad):
        return MaxPoolScatter.apply(grad, ctx.arg, ctx.spatial, ctx.windows), None, None


class AvgPool(Op):
    """Sum of each window divided by `divisor` (an array over the output's spatial dims)."""

    @staticmethod
    def forward(ctx, input, windows, divisor):
        data = input._data
        ctx.spatial = data.shape[data.ndim - len(windows.kernel):]
        ctx.windows, ctx.divisor = windows, divisor
        return average(input._device, data, windows, divisor)

    @staticmethod
    def backward(ctx, grad):
        return AvgPoolTranspose.apply(grad, ctx.spatial, ctx.windows, ctx.divisor), None, None


class AvgPoolTranspose(Op):
    """The adjoint of `AvgPool`: each value divided by its divisor, added over its window."""

    @staticmethod
    def forward(ctx, values, spatial, windows, divisor):
        ctx.windows, ctx.divisor = windows, divisor
        return spread(values._device, values._data, divisor, spatial, windows)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool.apply(grad, ctx.windows, ctx.divisor), None, None, None


def _divisor(xp, dtype, windows: Windows, spatial, out_size, count_include_pad,
             divisor_override):
    """PyTorch's averaging divisor per output position: window cells inside input + padding
    (count_include_pad) or inside the input only; never the ceil_mode overhang."""
    if divisor_override is not None:
        return dtype.type(divisor_override)
    divisor = np.ones((), np.int64)
    for size, n, k, s, (pad, _) in zip(spatial, out_size, windows.kernel, windows.stride,
                                      windows.padding):
        start = np.arange(n) * s - pad
        end = np.minimum(start + k, size + pad)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        divisor = np.multiply.outer(divisor, end - start)
    return xp.asarray(divisor.astype(dtype))


def _pool_windows(op: str, dims: int, input: Tensor, kernel_size, stride, padding, dilation,
                  ceil_mode: bool) -> Windows:
    """Check a pooling call's arguments and work out its window geometry (PyTorch's output
    size rule, ceil_mode included)."""
    check_input(op, dims, input)
    kernel = as_tuple(kernel_size, dims, "kernel_size", op)
    stride = kernel if stride is None or stride == () or stride == [] else \
        as_tuple(stride, dims, "stride", op)
    padding = as_tuple(padding, dims, "padding", op)
    dilation = as_tuple(dilation, dims, "dilation", op)
    check_positive(op, kernel_size=kernel, stride=stride, dilation=dilation)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(p < 0 or p > span // 2 for p, span in zip(padding, spans)):
        raise RuntimeError(f"{op}: padding {padding} must be at least 0 and at most half of the "
                           f"(dilated) kernel size {spans}")
    spatial = tuple(input.shape[-dims:])
    out_size = []
    for size, span, s, p in zip(spatial, spans, stride, padding):
        n = (size + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (n - 1) * s >= size + p:  # the last window must start inside
            n -= 1
        out_size.append(n)
    if any(n < 1 for n in out_size):
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} is too small for "
                           f"kernel_size={kernel}, stride={stride}, padding={padding}, dilation="
                           f"{dilation}: the output would have size {tuple(out_size)}")
    after = tuple(max(p, (n - 1) * s + span - size - p) for size, span, s, p, n in
                  zip(spatial, spans, stride, padding, out_size))
    return Windows(kernel, stride, dilation, tuple(zip(padding, after)))


def check_input(op: str, dims: int, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    names = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}[dims]
    if input.ndim not in (dims + 1, dims + 2) or 0 in input.shape[-dims - 1:]:
        raise RuntimeError(f"{op}: expected a non-empty {dims + 1}-D (unbatched) or {dims + 2}-D "
                           f"(batched) input of shape (N, C, {', '.join(names)}), got shape "
                           f"{tuple(input.shape)}")
    if not (input.is_floating_point() or input._data.dtype.kind in "iu"):
        raise RuntimeError(f"{op}: input must be a number tensor, got {input.dtype.name}")


def _max_pool(op, dims, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    windows = _pool_windows(op, dims, input, kernel_size, stride, padding, dilation, ceil_mode)
    return MaxPool.apply(input, windows, bool(return_indices))


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over sliding windows of (N, C, L) (or (C, L)); `stride` defaults to `kernel_size`.

    With `return_indices`, also returns each maximum's position along L.

    >>> import genesis
    >>> genesis.nn.functional.max_pool1d(genesis.tensor([[[1., 3., 2., 5., 4.]]]), 2)
    tensor([[[3., 5.]]])
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over sliding windows of (N, C, H, W) (or (C, H, W)); `stride` defaults to
    `kernel_size`. Padding counts as -inf; `ceil_mode` keeps a last partial window.

    With `return_indices`, also returns each maximum's flat position in H * W
    (what PyTorch returns). The gradient goes to that position; ties go to the
    first position of the window, as in PyTorch.

    >>> import genesis
    >>> x = genesis.arange(16.).reshape(1, 1, 4, 4)
    >>> genesis.nn.functional.max_pool2d(x, 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over sliding windows of (N, C, D, H, W) (or (C, D, H, W)); as `max_pool2d` with a
    depth dim (indices are flat positions in D * H * W).

    >>> import genesis
    >>> genesis.nn.functional.max_pool3d(genesis.randn(1, 2, 4, 4, 4), 2).shape
    genesis.Size([1, 2, 2, 2, 2])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(op, dims, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    windows = _pool_windows(op, dims, input, kernel_size, stride, padding, 1, ceil_mode)
    if not input.is_floating_point():
        raise RuntimeError(f"{op}: input must be floating point, got {input.dtype.name}; "
                           "convert it with .float()")
    if divisor_override is not None and (not isinstance(divisor_override, int)
                                         or divisor_override == 0):
        raise RuntimeError(f"{op}: divisor_override must be a non-zero int, got "
                           f"{divisor_override!r}")
    spatial = tuple(input.shape[-dims:])
    divisor = _divisor(input._device.xp, input._data.dtype, windows, spatial,
                       windows.output_size(spatial), count_include_pad, divisor_override)
    return AvgPool.apply(input, windows, divisor)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over sliding windows of (N, C, L) (or (C, L)); `stride` defaults to `kernel_size`.

    >>> import genesis
    >>> genesis.nn.functional.avg_pool1d(genesis.tensor([[[1., 3., 2., 6.]]]), 2)
    tensor([[[2., 4.]]])
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over sliding windows of (N, C, H, W) (or (C, H, W)).

    `count_include_pad`: divide by the window cells inside input + padding
    (True) or inside the input only; `divisor_override`: divide by this
    instead. The overhang of a ceil_mode window is never counted.

    >>> import genesis
    >>> x = genesis.ones(1, 1, 3, 3)
    >>> genesis.nn.functional.avg_pool2d(x, 2, padding=1)[0, 0]
    tensor([[0.2500, 0.5000],
            [0.5000, 1.0000]])
    >>> genesis.nn.functional.avg_pool2d(x, 2, padding=1, count_include_pad=False)[0, 0]
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over sliding windows of (N, C, D, H, W) (or (C, D, H, W)); as `avg_pool2d`.

    >>> import genesis
    >>> genesis.nn.functional.avg_pool3d(genesis.ones(1, 1, 2, 2, 2), 2)
    tensor([[[[[1.]]]]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


METHODS = {}


def pool_sample(rng, shape, *args, layout="contiguous", grad=None, **kwargs):
    return Sample((rng.uniform(-2, 2, shape),) + args, kwargs, layout=layout, grad=grad,
                  note=f"{shape} {args} {kwargs} {layout}")


def _max_pool1d_samples(rng):
    return [pool_sample(rng, (2, 3, 7), 3, 2), pool_sample(rng, (3, 6), 2),
            pool_sample(rng, (2, 2, 8), 3, 2, 1, 2, ceil_mode=True),
            pool_sample(rng, (2, 2, 7), 2, return_indices=True, ceil_mode=True),
            pool_sample(rng, (2, 3, 6), 3, 1, 1, layout="transposed")]


def _max_pool2d_samples(rng):
    return [pool_sample(rng, (2, 2, 4, 4), 2), pool_sample(rng, (2, 2, 5, 5), 3, 2, 1),
            pool_sample(rng, (1, 2, 6, 5), (2, 3), (1, 2), dilation=(2, 1)),
            pool_sample(rng, (2, 1, 5, 6), 2, ceil_mode=True, padding=1),
            pool_sample(rng, (2, 2, 5, 5), 3, 1, 1, return_indices=True),
            pool_sample(rng, (2, 3, 4, 6), 2, layout="transposed"),
            pool_sample(rng, (3, 4, 4), 2, 1, layout="strided"),
            pool_sample(rng, (1, 2, 4, 4), 2, grad=(False,))]


def _avg_pool1d_samples(rng):
    return [pool_sample(rng, (2, 3, 7), 3, 2), pool_sample(rng, (3, 6), 2),
            pool_sample(rng, (2, 2, 8), 3, 2, 1, count_include_pad=False),
            pool_sample(rng, (2, 2, 7), 2, 2, 1, ceil_mode=True),
            pool_sample(rng, (2, 3, 6), 3, 1, 1, layout="transposed")]


def _avg_pool2d_samples(rng):
    return [pool_sample(rng, (2, 2, 4, 4), 2), pool_sample(rng, (2, 2, 5, 5), 3, 2, 1),
            pool_sample(rng, (2, 2, 5, 5), 3, 2, 1, count_include_pad=False),
            pool_sample(rng, (2, 1, 5, 6), 2, ceil_mode=True, padding=1),
            pool_sample(rng, (1, 2, 7, 6), 3, 2, 1, ceil_mode=True, count_include_pad=False),
            pool_sample(rng, (2, 2, 4, 5), (2, 3), 1, divisor_override=4),
            pool_sample(rng, (2, 3, 4, 6), 2, layout="transposed"),
            pool_sample(rng, (3, 4, 4), 2, 1, layout="strided")]


def _max_pool3d_samples(rng):
    return [pool_sample(rng, (2, 2, 4, 4, 4), 2), pool_sample(rng, (1, 2, 5, 4, 5), 3, 2, 1),
            pool_sample(rng, (2, 3, 4, 5), (2, 1, 2), return_indices=True, ceil_mode=True),
            pool_sample(rng, (1, 2, 4, 4, 3), 2, 1, dilation=(1, 2, 1), layout="transposed")]


def _avg_pool3d_samples(rng):
    return [pool_sample(rng, (2, 2, 4, 4, 4), 2), pool_sample(rng, (1, 2, 5, 4, 5), 3, 2, 1),
            pool_sample(rng, (1, 2, 5, 4, 5), 3, 2, 1, count_include_pad=False, ceil_mode=True),
            pool_sample(rng, (2, 3, 4, 5), (2, 1, 2), divisor_override=3, layout="transposed")]


def torch_pool(name):
    return lambda torch, *args, **kwargs: getattr(torch.nn.functional, name)(*args, **kwargs)


def _max_pool2d_gradient(input: Tensor, grad_output: Tensor, *args, **kwargs) -> Tensor:
    """The gradient of `max_pool2d(input, *args, **kwargs)` for `grad_output`, as a function of
    `grad_output` (PyTorch's max_pool2d_with_indices_backward): a registry entry for the
    adjoint MaxPoolScatter, whose own gradient is MaxPoolGather. `input` only picks the cells."""
    leaf = input.detach().requires_grad_()
    return grad(max_pool2d(leaf, *args, **kwargs), leaf, grad_output, create_graph=True)[0]


def _torch_max_pool2d_gradient(torch, input, grad_output, *args, **kwargs):
    leaf = input.detach().requires_grad_()
    return torch.autograd.grad(torch.nn.functional.max_pool2d(leaf, *args, **kwargs), leaf,
                               grad_output, create_graph=True)[0]


def _max_pool2d_gradient_samples(rng):
    def sample(shape, out_shape, *args, layout="contiguous", **kwargs):
        return Sample((rng.uniform(-2, 2, shape), rng.uniform(-2, 2, out_shape)) + args, kwargs,
                      grad=(False, True), layout=layout, note=f"{shape} {args} {kwargs} {layout}")

    return [sample((2, 2, 4, 4), (2, 2, 2, 2), 2),
            sample((2, 2, 5, 5), (2, 2, 5, 5), 3, 1, 1),  # overlapping windows add up
            sample((1, 2, 6, 5), (1, 2, 4, 2), (2, 3), (1, 2), dilation=(2, 1)),
            sample((2, 3, 4, 6), (2, 3, 2, 3), 2, layout="transposed"),
            sample((3, 4, 4), (3, 3, 3), 2, 1, layout="strided")]


OPS = [
    OpInfo("max_pool1d", max_pool1d, _max_pool1d_samples, torch=torch_pool("max_pool1d"),
           kinks="ties within a window"),
    OpInfo("max_pool2d", max_pool2d, _max_pool2d_samples, torch=torch_pool("max_pool2d"),
           kinks="ties within a window"),
    OpInfo("max_pool2d_backward", _max_pool2d_gradient, _max_pool2d_gradient_samples,
           torch=_torch_max_pool2d_gradient, kinks="ties within a window of the input"),
    OpInfo("avg_pool1d", avg_pool1d, _avg_pool1d_samples, torch=torch_pool("avg_pool1d")),
    OpInfo("avg_pool2d", avg_pool2d, _avg_pool2d_samples, torch=torch_pool("avg_pool2d")),
    OpInfo("max_pool3d", max_pool3d, _max_pool3d_samples, torch=torch_pool("max_pool3d"),
           kinks="ties within a window"),
    OpInfo("avg_pool3d", avg_pool3d, _avg_pool3d_samples, torch=torch_pool("avg_pool3d")),
]
