"""Transposed convolutions (conv_transpose1d/2d/3d): the adjoint of a convolution with respect
to its input, as in PyTorch (often called deconvolution, used to upsample).

An input (N, C_in, *in) and a weight (C_in, C_out / groups, *kernel) give (N, C_out, *out) with
out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1. The
forward multiplies each input position by the kernel (one batched product into columns)
and adds the columns back where a convolution would have read them (col2im, `add_columns`);
`output_padding` adds cells at the far end: first those the padding would have cut off, then
cells no window reaches (they get only the bias).
The gradient with respect to the input is the convolution itself; the weight's is the input
times the unfolded output gradient. Both are differentiable ops, so gradients of any order
work.
"""
from __future__ import annotations

from ..autocast_rules import LOWER
from ..autograd.function import Op
from ..tensor import Tensor
from .convolution import Convolution, _torch_conv, check_tensor_ranks
from ._operands import rounded_product
from .registry import OpInfo, Sample
from ._window_kernels import add_columns
from .window import Unfold, as_tuple, check_positive
from .window_geometry import Windows

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


class ConvTranspose(Op):
    """(N, C_in, *in) with weight (C_in, C_out / groups, *kernel) -> (N, C_out, *out_size), plus
    bias; `windows` is the geometry of the convolution this op is the adjoint of."""

    autocast_policy = LOWER

    @staticmethod
    def forward(ctx, input, weight, bias, windows, groups, out_size):
        needs = ctx.needs_input_grad
        ctx.windows, ctx.groups, ctx.weight_shape = windows, groups, weight.shape
        ctx.save_for_backward(input if needs[1] else None, weight if needs[0] else None)
        xp = input._device.xp
        batch, in_channels = input.shape[:2]
        values = input._data.reshape(batch, groups, in_channels // groups, -1)
        kernels = weight._data.reshape(groups, in_channels // groups, -1)
        cols = (kernels.transpose(0, 2, 1) @ values).reshape(batch, -1, values.shape[-1])
        reached = ctx.reached = _reached_size(input.shape[2:], windows)
        summed = add_columns(input._device, cols, reached, windows)
        if reached == tuple(out_size):
            out = summed
        else:  # output_padding: cells past the last window
            out = xp.zeros(summed.shape[:2] + tuple(out_size), summed.dtype)
            out[(...,) + tuple(slice(0, n) for n in reached)] = summed
        if bias is not None:
            out += bias._data.reshape((-1,) + (1,) * len(out_size))
        return rounded_product(out, input._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs, groups, windows = ctx.needs_input_grad, ctx.groups, ctx.windows
        reached = grad[(Ellipsis,) + tuple(slice(0, n) for n in ctx.reached)] \
            if tuple(grad.shape[2:]) != ctx.reached else grad
        grad_input = grad_weight = grad_bias = None
        if needs[0]:
            grad_input = Convolution.apply(reached, weight, None, windows, groups)
        if needs[1]:
            batch, in_channels = input.shape[:2]
            cols = Unfold.apply(reached, windows)
            cols = cols.reshape(batch, groups, -1, cols.shape[-1])
            values = input.reshape(batch, groups, in_channels // groups, -1)
            grad_weight = (values @ cols.mT).sum(0).reshape(ctx.weight_shape)
        if needs[2]:
            grad_bias = grad.sum((0,) + tuple(range(2, grad.ndim)))
        return grad_input, grad_weight, grad_bias, None, None, None


def _reached_size(spatial: tuple, windows: Windows) -> tuple:
    """The output extent the windows cover: the convolution over it has `spatial` outputs."""
    return tuple((n - 1) * stride - before - after + span for n, stride, (before, after), span in
                 zip(spatial, windows.stride, windows.padding, windows.span))


def conv_transpose(op: str, dims: int, input: Tensor, weight: Tensor, bias, stride, padding,
                   output_padding, groups, dilation) -> Tensor:
    """The shared body of conv_transpose1d/2d/3d: check, work out the geometry, apply."""
    batched = _check_operands(op, dims, input, weight, bias, groups)
    kernel = tuple(weight.shape[2:])
    stride = as_tuple(stride, dims, "stride", op)
    dilation = as_tuple(dilation, dims, "dilation", op)
    padding = as_tuple(padding, dims, "padding", op)
    output_padding = as_tuple(output_padding, dims, "output_padding", op)
    check_positive(op, stride=stride, dilation=dilation)
    if any(p < 0 for p in padding + output_padding):
        raise RuntimeError(f"{op}: padding and output_padding must be non-negative, got "
                           f"{padding} and {output_padding}")
    if any(extra >= max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"{op}: output_padding {output_padding} must be smaller than the "
                           f"stride {stride} or the dilation {dilation} in each dim")
    # output_padding first uncovers cells the padding would crop (windows reach them), then
    # adds cells no window reaches
    windows = Windows(kernel, stride, dilation,
                      tuple((p, max(p - extra, 0)) for p, extra in zip(padding, output_padding)))
    source = input if batched else input.unsqueeze(0)
    reached = _reached_size(source.shape[2:], windows)
    out_size = tuple(n + max(extra - p, 0) for n, p, extra in zip(reached, padding, output_padding))
    if any(n < 1 for n in reached):
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} with kernel {kernel}, "
                           f"stride {stride}, padding {padding} and dilation {dilation} gives an "
                           f"output of size {out_size}; use less padding")
    out = ConvTranspose.apply(source, weight, bias, windows, groups, out_size)
    return out if batched else out.squeeze(0)


def _check_operands(op: str, dims: int, input: Tensor, weight: Tensor, bias, groups) -> bool:
    """Validate shapes and dtypes; return whether the input has a batch dim."""
    check_tensor_ranks(op, dims, input, weight, groups, "in_channels, out_channels / groups")
    channels = input.shape[-dims - 1]
    if channels != weight.shape[0] or channels % groups:
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} has {channels} channels, "
                           f"but weight of shape {tuple(weight.shape)} expects {weight.shape[0]} "
                           f"(weight.shape[0], divisible by groups={groups})")
    out_channels = weight.shape[1] * groups
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (out_channels,)):
        shape = tuple(bias.shape) if isinstance(bias, Tensor) else type(bias).__name__
        raise RuntimeError(f"{op}: bias must have shape ({out_channels},) to match out_channels "
                           f"(weight.shape[1] * groups), got {shape}")
    if not input.is_floating_point():
        raise RuntimeError(f"{op}: input must be floating point, got {input.dtype.name}; "
                           "convert it with .float()")
    return input.ndim == dims + 2


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 1-D convolution of (N, C_in, L) with weight (C_in, C_out / groups, k).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.conv_transpose1d(genesis.ones(1, 1, 3), genesis.ones(1, 1, 2), stride=2)
    tensor([[[1., 1., 1., 1., 1., 1.]]])
    """
    return conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                          output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 2-D convolution of (N, C_in, H, W) with weight (C_in, C_out / groups, kh, kw):
    with stride 2 it doubles the spatial size (an upsampling layer).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.conv_transpose2d(genesis.ones(1, 4, 8, 8), genesis.ones(4, 2, 3, 3), stride=2,
    ...                    padding=1, output_padding=1).shape
    genesis.Size([1, 2, 16, 16])
    """
    return conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                          output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 3-D convolution of (N, C_in, D, H, W) with weight (C_in, C_out / groups, *k)."""
    return conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                          output_padding, groups, dilation)


METHODS = {}


def _transposed_samples(rng, dims: int) -> list:
    def sample(input_shape, weight_shape, bias=True, grad=None, layout="contiguous", **kwargs):
        arrays = (rng.uniform(-1, 1, input_shape), rng.uniform(-1, 1, weight_shape))
        if bias:
            arrays += (rng.uniform(-1, 1, weight_shape[1] * kwargs.get("groups", 1)),)
        else:
            kwargs["bias"] = None
        return Sample(arrays, kwargs, grad=grad, layout=layout,
                      note=f"{input_shape} * {weight_shape} bias={bias} {kwargs} {layout}")

    if dims == 1:
        return [sample((2, 3, 4), (3, 2, 3)),
                sample((2, 4, 5), (4, 3, 2), stride=2, padding=1, output_padding=1, groups=2),
                sample((1, 2, 4), (2, 2, 3), stride=3, dilation=2, output_padding=2),
                sample((3, 4), (3, 2, 2), bias=False, layout="transposed")]
    if dims == 2:
        return [sample((2, 3, 3, 4), (3, 2, 3, 3), stride=2, padding=1, output_padding=1),
                sample((2, 4, 3, 3), (4, 1, 2, 3), groups=2, stride=(1, 2), dilation=(2, 1)),
                sample((1, 2, 4, 3), (2, 3, 3, 2), bias=False, padding=(1, 0)),
                sample((2, 2, 3, 3), (2, 2, 2, 2), grad=(False, True, True)),
                sample((2, 2, 3, 3), (2, 2, 2, 2), stride=2, layout="transposed"),
                sample((1, 1, 2, 2), (1, 1, 2, 2), stride=2, dilation=3, output_padding=2)]
    return [sample((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), stride=(2, 1, 2), padding=(0, 1, 0))]


OPS = [
    OpInfo("conv_transpose1d", conv_transpose1d, lambda rng: _transposed_samples(rng, 1),
           torch=_torch_conv("conv_transpose1d")),
    OpInfo("conv_transpose2d", conv_transpose2d, lambda rng: _transposed_samples(rng, 2),
           torch=_torch_conv("conv_transpose2d")),
    OpInfo("conv_transpose3d", conv_transpose3d, lambda rng: _transposed_samples(rng, 3),
           torch=_torch_conv("conv_transpose3d")),
]
