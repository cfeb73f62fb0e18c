"""Laplace(loc, scale): the double-exponential density exp(-|x - loc| / scale) / (2 scale)."""
from __future__ import annotations

from ..dtypes import finfo
from ..tensor import Tensor
from .location_scale import LocationScale
from .utils import draw

__all__ = ["Laplace"]


class Laplace(LocationScale):
    """Laplace(loc, scale) on the real line.

    >>> import genesis
    >>> Laplace(0.0, 1.0).log_prob(genesis.tensor(0.0)).item()  # -log 2
    -0.693147...
    """

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        # u uniform on [eps - 1, 1): log1p(-|u|) stays finite, as in PyTorch
        eps = finfo(self.loc.dtype).eps
        u = draw(self.loc, "uniform", self._extended(sample_shape), eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


