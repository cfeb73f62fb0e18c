"""`Dropout`: random zeroing during training, the identity in eval mode."""
from __future__ import annotations

from ..tensor import Tensor
from ._layers import dropout
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero elements with probability `p` while training (scaling the rest by 1 / (1 - p)).

    >>> import genesis
    >>> layer = genesis.nn.Dropout(0.5).eval()
    >>> layer(genesis.ones(3))
    tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
