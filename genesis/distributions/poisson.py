"""Poisson(rate): counts of events at `rate` per interval."""
from __future__ import annotations

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, draw

__all__ = ["Poisson"]


class Poisson(Distribution):
    """P(k) = rateᵏ e^(-rate) / k!.

    >>> import genesis
    >>> round(Poisson(2.0).log_prob(genesis.tensor(0.0)).item(), 6)  # -rate
    -2.0
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    batched_params = ("rate",)

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def _sample(self, sample_shape) -> Tensor:
        return draw(self.rate, "poisson", self._extended(sample_shape), self.rate._data)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, rate = broadcast_all(value, self.rate)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
