"""Exponential(rate): waiting times of a Poisson process, density rate·exp(-rate·x)."""
from __future__ import annotations

from ..creation import zeros_like
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, draw

__all__ = ["Exponential"]


class Exponential(Distribution):
    """Exp(rate) on [0, ∞).

    >>> import genesis
    >>> Exponential(2.0).cdf(genesis.tensor(0.5)).item()  # 1 - e⁻¹
    0.632120...
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    batched_params = ("rate",)

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> Tensor:
        return draw(self.rate, "standard_exponential", self._extended(sample_shape)) / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()
