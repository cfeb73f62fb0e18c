"""Pooling layers: `MaxPool1d/2d/3d`, `AvgPool1d/2d/3d`, `AdaptiveAvgPool1d/2d/3d`,
`AdaptiveMaxPool1d/2d/3d`, as in PyTorch (same arguments and repr).

>>> import genesis
>>> pool = genesis.nn.MaxPool2d(2)
>>> pool
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> pool(genesis.randn(8, 16, 32, 32)).shape
genesis.Size([8, 16, 16, 16])
"""
from __future__ import annotations

from ..ops import adaptive_pooling, pooling
from ..tensor import Tensor
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


class _MaxPoolNd(Module):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L); see `genesis.nn.functional.max_pool1d`.

    >>> import genesis
    >>> genesis.nn.MaxPool1d(3, stride=2)(genesis.randn(2, 4, 9)).shape
    genesis.Size([2, 4, 4])
    """

    _function = staticmethod(pooling.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W); `stride` defaults to `kernel_size`;
    `return_indices=True` also returns where each maximum came from.

    >>> import genesis
    >>> values, indices = genesis.nn.MaxPool2d(2, return_indices=True)(genesis.randn(1, 1, 4, 4))
    >>> values.shape, indices.dtype
    (genesis.Size([1, 1, 2, 2]), genesis.int64)
    """

    _function = staticmethod(pooling.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W); see `genesis.nn.functional.max_pool3d`.

    >>> import genesis
    >>> genesis.nn.MaxPool3d(2)(genesis.randn(1, 2, 4, 6, 6)).shape
    genesis.Size([1, 2, 2, 3, 3])
    """

    _function = staticmethod(pooling.max_pool3d)


class AvgPool1d(Module):
    """Mean over sliding windows of (N, C, L).

    >>> import genesis
    >>> genesis.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return pooling.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                  self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(value):
    return tuple(value) if isinstance(value, list | tuple) else (value,)


class AvgPool2d(Module):
    """Mean over sliding windows of (N, C, H, W); see `genesis.nn.functional.avg_pool2d` for
    `count_include_pad` and `divisor_override`.

    >>> import genesis
    >>> genesis.nn.AvgPool2d(3, stride=2, padding=1)(genesis.randn(2, 3, 8, 8)).shape
    genesis.Size([2, 3, 4, 4])
    """

    _function = staticmethod(pooling.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """Mean over sliding windows of (N, C, D, H, W); arguments as `AvgPool2d`.

    >>> import genesis
    >>> genesis.nn.AvgPool3d(2)(genesis.randn(1, 2, 4, 4, 4)).shape
    genesis.Size([1, 2, 2, 2, 2])
    """

    _function = staticmethod(pooling.avg_pool3d)


class _AdaptivePool(Module):
    _function = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor):
        return type(self)._function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return type(self)._function(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of (N, C, L) to a fixed length.

    >>> import genesis
    >>> genesis.nn.AdaptiveAvgPool1d(3)(genesis.randn(2, 4, 10)).shape
    genesis.Size([2, 4, 3])
    """

    _function = staticmethod(adaptive_pooling.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling of (N, C, H, W) to a fixed size (an int, or a pair whose None entries
    keep the input's size); `AdaptiveAvgPool2d(1)` is global average pooling.

    >>> import genesis
    >>> genesis.nn.AdaptiveAvgPool2d((1, 1))(genesis.randn(2, 64, 7, 7)).shape
    genesis.Size([2, 64, 1, 1])
    """

    _function = staticmethod(adaptive_pooling.adaptive_avg_pool2d)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of (N, C, L) to a fixed length.

    >>> import genesis
    >>> genesis.nn.AdaptiveMaxPool1d(2)(genesis.randn(2, 4, 9)).shape
    genesis.Size([2, 4, 2])
    """

    _function = staticmethod(adaptive_pooling.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling of (N, C, H, W) to a fixed size.

    >>> import genesis
    >>> genesis.nn.AdaptiveMaxPool2d(2)(genesis.randn(1, 3, 5, 5)).shape
    genesis.Size([1, 3, 2, 2])
    """

    _function = staticmethod(adaptive_pooling.adaptive_max_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of (N, C, D, H, W) to a fixed size.

    >>> import genesis
    >>> genesis.nn.AdaptiveAvgPool3d(1)(genesis.randn(2, 8, 3, 4, 5)).shape
    genesis.Size([2, 8, 1, 1, 1])
    """

    _function = staticmethod(adaptive_pooling.adaptive_avg_pool3d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of (N, C, D, H, W) to a fixed size."""

    _function = staticmethod(adaptive_pooling.adaptive_max_pool3d)
