"""Pixel shuffle: (N, C r², H, W) <-> (N, C, H r, W r), as views and permutes (so their
gradients are those of reshape and permute), and the modules."""
from __future__ import annotations

from ..tensor import Tensor
from .module import Module

__all__ = ["pixel_shuffle", "pixel_unshuffle", "PixelShuffle", "PixelUnshuffle"]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C r², H, W) into (*, C, H r, W r).

    >>> import genesis
    >>> pixel_shuffle(genesis.arange(8.0).reshape(1, 4, 1, 2), 2).shape
    genesis.Size([1, 1, 2, 4])
    """
    r = upscale_factor
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's channel dimension to be divisible by "
                           f"the square of upscale_factor ({r}), got shape {tuple(input.shape)}")
    *lead, channels, height, width = input.shape
    grouped = input.reshape(*lead, channels // (r * r), r, r, height, width)
    n = len(lead)
    order = tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)
    return grouped.permute(order).reshape(*lead, channels // (r * r), height * r, width * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange (*, C, H r, W r) into (*, C r², H, W): the inverse of pixel_shuffle."""
    r = downscale_factor
    if input.ndim < 3 or input.shape[-2] % r or input.shape[-1] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width divisible by "
                           f"downscale_factor ({r}), got shape {tuple(input.shape)}")
    *lead, channels, height, width = input.shape
    grouped = input.reshape(*lead, channels, height // r, r, width // r, r)
    n = len(lead)
    order = tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)
    return grouped.permute(order).reshape(*lead, channels * r * r, height // r, width // r)


class PixelShuffle(Module):
    """`pixel_shuffle(input, upscale_factor)` as a module."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """`pixel_unshuffle(input, downscale_factor)` as a module."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
