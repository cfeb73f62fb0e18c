"""PyTorch's deprecated functional aliases of `interpolate`, kept so old scripts run: each
warns as PyTorch does and calls `interpolate`."""
from __future__ import annotations

import warnings

from ..tensor import Tensor
from .upsampling import interpolate

__all__ = ["upsample_nearest", "upsample_bilinear"]


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate(input, size, scale_factor, mode="nearest")` (deprecated).

    >>> import genesis, warnings
    >>> import genesis.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(genesis.ones(1, 1, 2, 2), scale_factor=2).shape
    genesis.Size([1, 1, 4, 4])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)`
    (deprecated).

    >>> import genesis, warnings
    >>> import genesis.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(genesis.ones(1, 1, 2, 2), size=(3, 5)).shape
    genesis.Size([1, 1, 3, 5])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
