"""`Unfold` and `Fold`: sliding blocks out of an image (im2col) and summed back in (col2im),
as modules over `F.unfold` and `F.fold`."""
from __future__ import annotations

from ..ops.window import fold, unfold
from ..tensor import Tensor
from .module import Module

__all__ = ["Unfold", "Fold"]


class Unfold(Module):
    """(N, C, H, W) -> (N, C * kh * kw, L): each sliding block as a column.

    >>> import genesis
    >>> Unfold(kernel_size=2)(genesis.zeros(1, 3, 4, 4)).shape
    genesis.Size([1, 12, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """(N, C * kh * kw, L) -> (N, C, *output_size): the blocks summed back into an image."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
