"""`Conv1d`, `Conv2d`, `Conv3d` and `ConvTranspose1d/2d/3d`: learnable convolutions, as in
PyTorch (same parameters, init, repr and state-dict keys).

>>> import genesis
>>> conv = genesis.nn.Conv2d(3, 16, kernel_size=3, padding=1)
>>> conv
Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
>>> conv(genesis.randn(8, 3, 32, 32)).shape
genesis.Size([8, 16, 32, 32])
"""
from __future__ import annotations

import math

import numpy as np

from ..creation import empty
from ..ops.conv_transpose import conv_transpose
from ..ops.convolution import convolution
from ..ops.window import as_tuple
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _dims = 0

    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__()
        name, dims = type(self).__name__, self._dims
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                             f"must both be divisible by groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = as_tuple(kernel_size, dims, "kernel_size", name)
        self.stride = as_tuple(stride, dims, "stride", name)
        self.dilation = as_tuple(dilation, dims, "dilation", name)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be 'same', 'valid', an int or a tuple of "
                                 f"{dims} ints, got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions (stride={self.stride})")
            self.padding = padding
        else:
            self.padding = as_tuple(padding, dims, "padding", name)
        self.padding_mode = padding_mode
        weight_shape = (in_channels, out_channels // groups) if self._transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*weight_shape, *self.kernel_size, device=device, dtype=dtype))
        self.register_parameter("bias", Parameter(empty(out_channels, device=device, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: weight ~ kaiming_uniform_(a=sqrt(5)), i.e. U(-b, b) with
        b = 1 / sqrt(fan_in), and bias from the same range."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        op = f"conv{self._dims}d"
        if self.padding_mode == "zeros":
            return convolution(op, self._dims, input, self.weight, self.bias, self.stride,
                               self.padding, self.dilation, self.groups)
        padded = _pad_by_mode(input, self._padding_pairs(), self.padding_mode)
        return convolution(op, self._dims, padded, self.weight, self.bias, self.stride, 0,
                           self.dilation, self.groups)

    def _padding_pairs(self) -> tuple:
        if self.padding == "valid":
            return ((0, 0),) * self._dims
        if self.padding == "same":
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            return tuple((total // 2, total - total // 2) for total in totals)
        return tuple((p, p) for p in self.padding)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * self._dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            text += f", dilation={self.dilation}"
        if getattr(self, "output_padding", (0,) * self._dims) != (0,) * self._dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


def _pad_by_mode(input: Tensor, pairs: tuple, mode: str) -> Tensor:
    """Pad the trailing dims by reflecting, replicating or wrapping the input, as an index
    gather (so the gradient adds back to the cells that were copied)."""
    spatial = input.shape[-len(pairs):]
    key = [Ellipsis]
    for dim, ((before, after), size) in enumerate(zip(pairs, spatial)):
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"reflect padding ({before}, {after}) must be smaller than the "
                               f"input size {size} (input of shape {tuple(input.shape)})")
        position = np.arange(-before, size + after)
        if mode == "reflect":
            period = max(2 * (size - 1), 1)
            position = position % period
            position = np.where(position >= size, period - position, position)
        elif mode == "replicate":
            position = np.clip(position, 0, size - 1)
        else:
            position = position % size
        key.append(input._device.xp.asarray(
            position.reshape((-1,) + (1,) * (len(pairs) - dim - 1))))
    return input[tuple(key)]


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) -> (N, C_out, L_out).

    >>> import genesis
    >>> genesis.nn.Conv1d(4, 8, 3, stride=2)(genesis.randn(2, 4, 11)).shape
    genesis.Size([2, 8, 5])
    """

    _dims = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) -> (N, C_out, H_out, W_out).

    `padding`: an int, a pair, 'valid' or 'same'; `padding_mode`: 'zeros',
    'reflect', 'replicate' or 'circular'; `groups` splits the channels into
    independent groups (groups == in_channels: depthwise).

    >>> import genesis
    >>> genesis.nn.Conv2d(16, 32, 3, stride=2, padding=1)(genesis.randn(4, 16, 32, 32)).shape
    genesis.Size([4, 32, 16, 16])
    """

    _dims = 2


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W).

    >>> import genesis
    >>> genesis.nn.Conv3d(2, 4, 3, padding=1)(genesis.randn(1, 2, 5, 5, 5)).shape
    genesis.Size([1, 4, 5, 5, 5])
    """

    _dims = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'{name}: only "zeros" padding mode is supported, got {padding_mode!r}')
        if isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of {self._dims} ints, got "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, device, dtype)
        self.output_padding = as_tuple(output_padding, self._dims, "output_padding", name)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self.output_padding if output_size is None else \
            self._output_padding_for(input, output_size)
        return conv_transpose(f"conv_transpose{self._dims}d", self._dims, input, self.weight,
                              self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)

    def _output_padding_for(self, input: Tensor, output_size) -> tuple:
        """The output_padding that makes the output `output_size` (its trailing dims)."""
        wanted = tuple(output_size)[-self._dims:]
        spatial = tuple(input.shape[-self._dims:])
        smallest = tuple((n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in zip(
            spatial, self.stride, self.padding, self.dilation, self.kernel_size))
        largest = tuple(low + s - 1 for low, s in zip(smallest, self.stride))
        if len(wanted) != self._dims or any(not low <= n <= high for n, low, high in
                                            zip(wanted, smallest, largest)):
            raise ValueError(f"{type(self).__name__}: requested an output size of {wanted}, but "
                             f"valid sizes range from {smallest} to {largest} for an input of "
                             f"spatial size {spatial}")
        return tuple(n - low for n, low in zip(wanted, smallest))


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (N, C_in, L) -> (N, C_out, L_out), weight (C_in, C_out /
    groups, k).

    >>> import genesis
    >>> genesis.nn.ConvTranspose1d(4, 2, 3, stride=2)(genesis.randn(1, 4, 5)).shape
    genesis.Size([1, 2, 11])
    """

    _dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution: with stride 2, kernel 4 and padding 1 (or kernel 3, padding 1
    and output_padding 1) it doubles height and width; `forward(x, output_size=...)` picks the
    output_padding that gives a wanted size.

    >>> import genesis
    >>> up = genesis.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
    >>> up(genesis.randn(2, 16, 7, 7)).shape
    genesis.Size([2, 8, 14, 14])
    """

    _dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W)."""

    _dims = 3
