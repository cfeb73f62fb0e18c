"""Modules over `genesis.nn._composite_functions`: the activations LogSigmoid, Softsign,
Tanhshrink, Hardshrink, Softshrink, Threshold and GLU, the similarities CosineSimilarity
and PairwiseDistance, and channel dropout (Dropout1d/2d/3d)."""
from __future__ import annotations

from ..tensor import Tensor
from . import _composite_functions as C
from .dropout import Dropout
from .module import Module

__all__ = ["LogSigmoid", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "Threshold", "GLU",
           "CosineSimilarity", "PairwiseDistance", "Dropout1d", "Dropout2d", "Dropout3d"]


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return C.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return C.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return C.tanhshrink(input)


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return C.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x shrunk towards 0 by lambd (0 within [-lambd, lambd])."""

    def forward(self, input: Tensor) -> Tensor:
        return C.softshrink(input, self.lambd)


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return C.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class GLU(Module):
    """The first half of `dim` times the sigmoid of the second."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return C.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along `dim`."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return C.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The p-norm distance of two inputs along the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return C.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class _ChannelDropout(Dropout):
    """Dropout of whole channels: Dropout's options, its own function."""

    _function = staticmethod(C.dropout1d)

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, self.p, self.training)


class Dropout1d(_ChannelDropout):
    """Zero whole channels of (N, C, L) inputs while training."""

    _function = staticmethod(C.dropout1d)


class Dropout2d(_ChannelDropout):
    """Zero whole channels of (N, C, H, W) inputs while training."""

    _function = staticmethod(C.dropout2d)


class Dropout3d(_ChannelDropout):
    """Zero whole channels of (N, C, D, H, W) inputs while training."""

    _function = staticmethod(C.dropout3d)
