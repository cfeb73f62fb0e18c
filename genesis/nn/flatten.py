"""`Flatten` and `Unflatten`: merge a range of dimensions, or split one."""
from __future__ import annotations

from ..ops._operands import normalize_dim
from ..tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge dims `start_dim`..`end_dim` (default: all but the batch dimension).

    >>> import genesis
    >>> genesis.nn.Flatten()(genesis.zeros(2, 3, 4)).shape
    genesis.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension `dim` into `unflattened_size` (one extent may be -1).

    >>> import genesis
    >>> genesis.nn.Unflatten(1, (3, 4))(genesis.zeros(2, 12)).shape
    genesis.Size([2, 3, 4])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        dim = normalize_dim(self.dim, input.ndim, "unflatten")
        shape = input.shape
        return input.reshape(shape[:dim] + self.unflattened_size + shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
