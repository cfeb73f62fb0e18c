"""`LayerNorm`, `RMSNorm` and `GroupNorm`."""
from __future__ import annotations

from ..creation import ones, zeros
from ..tensor import Tensor
from ._norm_functions import group_norm, layer_norm, rms_norm
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm"]


def _shape(normalized_shape) -> tuple:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(Module):
    """Normalise the trailing `normalized_shape` dims; learnable scale (ones) and shift (zeros).

    >>> import genesis
    >>> norm = genesis.nn.LayerNorm(4)
    >>> norm, norm(genesis.randn(2, 4)).shape
    (LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True), genesis.Size([2, 4]))
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape, self.eps = _shape(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
                                if elementwise_affine else None)
        self.register_parameter("bias", Parameter(zeros(self.normalized_shape, device=device, dtype=dtype))
                                if elementwise_affine and bias else None)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / rms(x) over the trailing dims, times a learnable scale; `eps=None` uses the dtype's
    machine epsilon."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape, self.eps = _shape(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
                                if elementwise_affine else None)

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalise groups of channels per sample; per-channel scale and shift."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.register_parameter("weight", Parameter(ones(num_channels, device=device, dtype=dtype))
                                if affine else None)
        self.register_parameter("bias", Parameter(zeros(num_channels, device=device, dtype=dtype))
                                if affine and bias else None)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
