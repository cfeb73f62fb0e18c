"""The arithmetic shared by both forms of weight and spectral normalization
(`parametrizations` and the older hook-based `weight_norm` / `spectral_norm`).

>>> import genesis
>>> norm_except_dim(genesis.tensor([[3., 4.], [6., 8.]]), 0).flatten()
tensor([ 5., 10.])
"""
from __future__ import annotations

from ...tensor import Tensor

__all__ = ["norm_except_dim", "weight_from_norm", "as_matrix"]


def norm_except_dim(weight: Tensor, dim: int) -> Tensor:
    """The 2-norm of `weight` over every dimension but `dim`, kept as size-1 dimensions
    (dim -1: over all of it, a 0-d tensor), as `torch.norm_except_dim(weight, 2, dim)`."""
    if dim == -1:
        return weight.norm()
    dim = dim % weight.ndim
    others = tuple(axis for axis in range(weight.ndim) if axis != dim)
    return (weight * weight).sum(others, keepdim=True).sqrt() if others else weight.abs()


def weight_from_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """g * v / ||v|| with the norm taken as `norm_except_dim` does (`torch._weight_norm`)."""
    return v * (g / norm_except_dim(v, dim))


def as_matrix(weight: Tensor, dim: int) -> Tensor:
    """`weight` as a matrix whose rows run along `dim` (spectral normalization's view)."""
    if dim != 0:
        weight = weight.permute(dim, *(axis for axis in range(weight.ndim) if axis != dim))
    return weight.flatten(1)
