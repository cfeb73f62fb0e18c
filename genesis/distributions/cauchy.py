"""Cauchy(loc, scale): the Lorentz density, with no mean or variance."""
from __future__ import annotations

import math

from ..tensor import Tensor
from .location_scale import LocationScale
from .utils import draw

__all__ = ["Cauchy"]


class Cauchy(LocationScale):
    """Cauchy(loc, scale): density 1 / (π scale (1 + ((x - loc) / scale)²)).

    >>> import genesis
    >>> Cauchy(0.0, 1.0).cdf(genesis.tensor(1.0)).item()
    0.75
    """

    @property
    def mean(self) -> Tensor:
        return self._filled(self.loc, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self._filled(self.loc, float("inf"))

    def rsample(self, sample_shape=()) -> Tensor:
        # tan(π (u - 1/2)) of a uniform u, as PyTorch's cauchy_ draws: CuPy's generator has no
        # standard_cauchy
        standard = (math.pi * (draw(self.loc, "random", self._extended(sample_shape)) - 0.5)).tan()
        return self.loc + standard * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
