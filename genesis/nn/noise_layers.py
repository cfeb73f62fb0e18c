"""Layers that draw random numbers while training: `AlphaDropout`, `FeatureAlphaDropout`
(dropout for SELU networks) and `RReLU` (a leaky ReLU with random negative slopes)."""
from __future__ import annotations

from ..tensor import Tensor
from ._noise_functions import alpha_dropout, feature_alpha_dropout, rrelu
from .dropout import Dropout
from .module import Module

__all__ = ["AlphaDropout", "FeatureAlphaDropout", "RReLU"]


class AlphaDropout(Dropout):
    """Alpha dropout while training (mean and variance kept), the identity in eval mode.

    >>> import genesis
    >>> genesis.nn.AlphaDropout(0.2).eval()(genesis.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels (dim 1) while training, the identity in eval mode.

    >>> import genesis
    >>> genesis.nn.FeatureAlphaDropout(1.0)(genesis.ones(1, 2, 3)).abs().sum().item()
    0.0
    """

    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)


class RReLU(Module):
    """x where x >= 0, else slope * x: the slope drawn from U(lower, upper) per element while
    training, (lower + upper) / 2 in eval mode.

    >>> import genesis
    >>> genesis.nn.RReLU(0.2, 0.4).eval()(genesis.tensor([-1.0, 1.0]))
    tensor([-0.3000,  1.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"
