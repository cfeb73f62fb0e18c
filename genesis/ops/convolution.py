"""Convolutions (conv1d, conv2d, conv3d) as im2col + one batched matrix product.

The forward unfolds the padded input into columns (N, C * K, L) and multiplies
them by the weight viewed as (groups, O / groups, C / groups * K). The
backward recomputes the columns from the saved input rather than keeping them
(K times the input's memory): weight gradient = grad @ columns^T, input
gradient = fold(weight^T @ grad). Without create_graph it runs on arrays; with
it, the same products are Tensor ops around `Unfold`/`Fold`, so it is
differentiable again. bench/conv.py measured this against as_strided + einsum
(the alternative) and PyTorch.
"""
from __future__ import annotations

import warnings

from ..autocast_rules import LOWER
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor
from ._operands import rounded_product
from .registry import OpInfo, Sample
from ._window_kernels import columns
from .gradient_rules import run_rule
from .pad import pad
from .window import as_tuple, check_positive
from .window_geometry import Windows

__all__ = ["conv1d", "conv2d", "conv3d"]


class Convolution(Op):
    """Cross-correlation of (N, C, *spatial) with weight (O, C / groups, *kernel), plus bias."""

    autocast_policy = LOWER

    @staticmethod
    def forward(ctx, input, weight, bias, windows, groups):
        needs = ctx.needs_input_grad
        ctx.windows, ctx.groups, ctx.spatial = windows, groups, input.shape[2:]
        ctx.weight_shape = weight.shape
        ctx.save_for_backward(input if needs[1] else None, weight if needs[0] else None)
        cols = columns(input._device, input._data, windows)
        batch, out_channels = input.shape[0], weight.shape[0]
        kernels = weight._data.reshape(groups, out_channels // groups, -1)
        out = kernels @ cols.reshape(batch, groups, -1, cols.shape[-1])
        out = out.reshape((batch, out_channels) + windows.output_size(ctx.spatial))
        if bias is not None:
            out += bias._data.reshape((-1,) + (1,) * len(ctx.spatial))
        return rounded_product(out, input._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        geometry = (ctx.groups, tuple(ctx.weight_shape), tuple(ctx.spatial), ctx.windows)
        return run_rule(_convolution_rule, grad, input, weight, geometry,
                        ctx.needs_input_grad) + (None, None)


def _convolution_rule(m, grad, input, weight, geometry: tuple, needs: tuple) -> tuple:
    """The gradients of a grouped convolution, as im2col products: to the input, the columns
    each window read from it added back (`m.add_columns`); to the weight, the gradient times
    the input's columns (`m.columns`), summed over the batch; to the bias, the gradient summed
    over the batch and the positions."""
    groups, weight_shape, spatial, windows = geometry
    batch = grad.shape[0]
    grads = grad.reshape(batch, groups, grad.shape[1] // groups, -1)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        kernels = weight.reshape(groups, weight_shape[0] // groups, -1)
        cols = (kernels.mT @ grads).reshape(batch, -1, grads.shape[-1])
        grad_input = m.add_columns(cols, spatial, windows)
    if needs[1]:
        cols = m.columns(input, windows)
        cols = cols.reshape(batch, groups, -1, cols.shape[-1])
        grad_weight = (grads @ cols.mT).reshape((batch,) + weight_shape).sum(0)
    if needs[2]:
        grad_bias = grad.sum((0,) + tuple(range(2, grad.ndim)))
    return grad_input, grad_weight, grad_bias


def _padding(op: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """(before, after) per spatial dim for an int, a tuple, 'valid' or 'same' (the odd extra
    unit after, as PyTorch does)."""
    dims = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * dims
        if padding != "same":
            raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple of "
                             f"{dims} ints, got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                             f"(stride={stride}); pad explicitly with an int or tuple instead")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((total // 2, total - total // 2) for total in totals)
    padding = as_tuple(padding, dims, "padding", op)
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}: padding must be non-negative, got {padding}")
    return tuple((p, p) for p in padding)


def check_tensor_ranks(op: str, dims: int, input: Tensor, weight: Tensor, groups,
                       weight_layout: str) -> None:
    """Input and weight are Tensors of the right ranks, groups a positive int (the checks a
    convolution and a transposed one share); `weight_layout` names the weight's first dims."""
    for name, value in (("input", input), ("weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) "
                           f"input of shape (N, C, {_spatial_names(dims)}), got shape "
                           f"{tuple(input.shape)}")
    if weight.ndim != dims + 2:
        raise RuntimeError(f"{op}: weight must be {dims + 2}-D ({weight_layout}, "
                           f"{_spatial_names(dims, 'k')}), got shape {tuple(weight.shape)}")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")


def _check_operands(op: str, input: Tensor, weight: Tensor, bias, groups, dims: int) -> bool:
    """Validate shapes, dtypes and devices; return whether the input has a batch dim."""
    check_tensor_ranks(op, dims, input, weight, groups, "out_channels, in_channels / groups")
    channels = input.shape[-dims - 1]
    if channels != weight.shape[1] * groups:
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} has {channels} channels, "
                           f"but weight of shape {tuple(weight.shape)} with groups={groups} expects "
                           f"{weight.shape[1] * groups} (weight.shape[1] * groups)")
    if weight.shape[0] % groups:
        raise RuntimeError(f"{op}: out_channels = {weight.shape[0]} (weight of shape "
                           f"{tuple(weight.shape)}) must be divisible by groups={groups}")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (weight.shape[0],)):
        shape = tuple(bias.shape) if isinstance(bias, Tensor) else type(bias).__name__
        raise RuntimeError(f"{op}: bias must have shape ({weight.shape[0]},) to match "
                           f"out_channels, got {shape}")
    operands = [("input", input), ("weight", weight)]
    if bias is not None:
        operands.append(("bias", bias))
    if not input.is_floating_point():
        raise RuntimeError(f"{op}: input must be floating point, got {input.dtype.name}; "
                           "convert it with .float()")
    if any(t._device != input._device for _, t in operands):
        where = ", ".join(f"{name} on {t.device}" for name, t in operands)
        raise RuntimeError(f"{op}: expected all tensors on one device, got {where}")
    if grad_state.autocast_on(input._device.type) is None and any(t.dtype != input.dtype for _, t in operands):
        names = ", ".join(f"{name} {t.dtype.name}" for name, t in operands)
        raise RuntimeError(f"{op}: dtypes differ ({names}); cast the input (e.g. x.float()) or "
                           "the layer (e.g. layer.double()) so they match")
    return input.ndim == dims + 2


def _spatial_names(dims: int, prefix: str = "") -> str:
    names = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}[dims]
    return ", ".join(prefix + name for name in names)


def convolution(op: str, dims: int, input: Tensor, weight: Tensor, bias, stride, padding,
                dilation, groups) -> Tensor:
    """The shared body of conv1d/2d/3d: check, build the window geometry, apply."""
    batched = _check_operands(op, input, weight, bias, groups, dims)
    kernel = tuple(weight.shape[2:])
    stride = as_tuple(stride, dims, "stride", op)
    dilation = as_tuple(dilation, dims, "dilation", op)
    check_positive(op, stride=stride, dilation=dilation)
    amounts = _padding(op, padding, kernel, dilation, stride)
    if any(before != after for before, after in amounts):
        # 'same' with an even dilated kernel, as PyTorch: the odd extra unit is a zero-padded
        # copy of the input (a node of its own), and the convolution pads symmetrically. The
        # convolution keeps that copy, so an in-place write to the input after the forward
        # leaves the backward free to run, as in PyTorch.
        input = pad(input, tuple(amount for before, after in reversed(amounts)
                                 for amount in (0, after - before)))
        amounts = tuple((before, before) for before, _ in amounts)
    windows = Windows(kernel, stride, dilation, amounts)
    spatial = tuple(input.shape[-dims:])
    padded = windows.padded_size(spatial)
    if any(span > size for span, size in zip(windows.span, padded)):
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} padded to {padded} is "
                           f"smaller than the kernel {kernel}" + (
                               f" dilated to {windows.span}" if windows.span != kernel else "")
                           + " of weight of shape " + f"{tuple(weight.shape)}; use a smaller "
                           "kernel or more padding")
    source = input if batched else input.unsqueeze(0)
    out = Convolution.apply(source, weight, bias, windows, groups)
    return out if batched else out.squeeze(0)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) of (N, C, L) with weight (O, C / groups, k).

    `padding`: an int, a 1-tuple, 'valid' (none) or 'same' (output as long as
    the input; stride 1 only).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.conv1d(genesis.arange(5.).reshape(1, 1, 5), genesis.ones(1, 1, 3))
    tensor([[[3., 6., 9.]]])
    """
    return convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) of (N, C, H, W) with weight (O, C / groups, kh, kw).

    `stride`, `padding`, `dilation`: an int or a pair; `padding` may also be
    'valid' or 'same'. (C, H, W) input is treated as a batch of one.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> x = genesis.ones(8, 3, 32, 32)
    >>> F.conv2d(x, genesis.ones(16, 3, 3, 3), padding=1).shape
    genesis.Size([8, 16, 32, 32])
    >>> F.conv2d(x, genesis.ones(16, 3, 3, 3), stride=2).shape
    genesis.Size([8, 16, 15, 15])
    """
    return convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) with weight (O, C / groups, kd, kh, kw).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.conv3d(genesis.ones(1, 2, 4, 4, 4), genesis.ones(3, 2, 2, 2, 2)).shape
    genesis.Size([1, 3, 3, 3, 3])
    """
    return convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


METHODS = {}


def _conv_sample(rng, input_shape, weight_shape, bias=True, grad=None, layout="contiguous",
                 **kwargs):
    arrays = (rng.uniform(-1, 1, input_shape), rng.uniform(-1, 1, weight_shape))
    if bias:
        arrays += (rng.uniform(-1, 1, weight_shape[0]),)
    else:
        kwargs = dict(kwargs, bias=None)
    return Sample(arrays, kwargs, grad=grad, layout=layout,
                  note=f"{input_shape} * {weight_shape} bias={bias} {kwargs} {layout}")


def _conv1d_samples(rng):
    return [_conv_sample(rng, (2, 3, 7), (4, 3, 3)),
            _conv_sample(rng, (2, 4, 9), (6, 2, 2), stride=2, padding=1, dilation=2, groups=2),
            _conv_sample(rng, (3, 8), (2, 3, 4), padding="same"),
            _conv_sample(rng, (1, 2, 6), (3, 2, 3), bias=False, padding="valid"),
            _conv_sample(rng, (2, 3, 5), (2, 3, 2), layout="transposed")]


def _conv2d_samples(rng):
    return [_conv_sample(rng, (2, 3, 5, 5), (4, 3, 3, 3), padding=1),
            _conv_sample(rng, (2, 4, 6, 5), (6, 2, 3, 2), stride=(2, 1), padding=(1, 0),
                         dilation=(1, 2), groups=2),
            _conv_sample(rng, (1, 2, 5, 6), (2, 2, 2, 3), bias=False, padding="same"),
            _conv_sample(rng, (2, 4, 4, 4), (4, 1, 3, 3), padding=1, groups=4),
            _conv_sample(rng, (2, 2, 4, 5), (3, 2, 2, 2), grad=(False, True, True)),
            _conv_sample(rng, (2, 2, 4, 5), (3, 2, 2, 2), grad=(True, False, False)),
            _conv_sample(rng, (2, 3, 4, 4), (2, 3, 3, 3), layout="transposed", stride=2,
                         padding=1),
            _conv_sample(rng, (3, 5, 5), (2, 3, 3, 3), layout="strided")]


def _conv3d_samples(rng):
    return [_conv_sample(rng, (1, 2, 4, 3, 4), (3, 2, 2, 2, 2), padding=(1, 0, 1)),
            _conv_sample(rng, (2, 2, 3, 3, 3), (2, 1, 2, 1, 2), groups=2, stride=(1, 2, 1))]


def _torch_conv(name):
    def call(torch, *args, **kwargs):
        with warnings.catch_warnings():  # PyTorch notes that 'same' with an even kernel copies
            warnings.simplefilter("ignore", UserWarning)
            return getattr(torch.nn.functional, name)(*args, **kwargs)
    return call


OPS = [
    OpInfo("conv1d", conv1d, _conv1d_samples, torch=_torch_conv("conv1d")),
    OpInfo("conv2d", conv2d, _conv2d_samples, torch=_torch_conv("conv2d")),
    OpInfo("conv3d", conv3d, _conv3d_samples, torch=_torch_conv("conv3d")),
]
