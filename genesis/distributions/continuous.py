"""Normal and Uniform distributions."""
from __future__ import annotations

import math

from ..ops.special_functions import erfinv
from ..ops.unary import erf
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .location_scale import LocationScale
from .utils import broadcast_all, draw

__all__ = ["Normal", "Uniform"]


class Normal(LocationScale):
    """N(loc, scale²).

    >>> import genesis
    >>> Normal(0.0, 1.0).log_prob(genesis.tensor(0.0)).item()  # -log √(2π)
    -0.9189385...
    """

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    @property
    def stddev(self) -> Tensor:
        return self.scale   # as PyTorch: not sqrt(scale²), which may differ in the last bit

    def rsample(self, sample_shape=()) -> Tensor:
        return self.loc + self.scale * draw(self.loc, "standard_normal", self._extended(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)


class Uniform(Distribution):
    """U[low, high).

    >>> Uniform(0.0, 4.0).entropy().item()  # log 4
    1.386294...
    """

    has_rsample = True
    batched_params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    def rsample(self, sample_shape=()) -> Tensor:
        return self.low + (self.high - self.low) * draw(self.low, "random", self._extended(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low
