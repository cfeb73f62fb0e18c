"""Gamma(concentration, rate): density rateᵃ xᵃ⁻¹ e^(-rate x) / Γ(a), with reparameterised
samples whose gradient is the implicit one (gamma_sampling.StandardGamma)."""
from __future__ import annotations

from ..dtypes import finfo
from ..ops.composites import xlogy
from ..ops.special_functions import digamma, igamma, lgamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma_sampling import StandardGamma
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma with shape `concentration` and inverse scale `rate`.

    >>> import genesis
    >>> Gamma(2.0, 1.0).log_prob(genesis.tensor(1.0)).item() == -1.0  # log(1 · e⁻¹ / Γ(2))
    True
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    batched_params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.concentration.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        value = StandardGamma.apply(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = finfo(value.dtype).tiny
        if bool((value < tiny).any().item()):
            # PyTorch clamps the data only (value.detach().clamp_), leaving the gradient as it
            # is; genesis's division saved its result, so the clamp is added as a constant
            value = value + (value.clamp(min=tiny) - value).detach()
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - \
            self.rate * value - lgamma(self.concentration)

    def entropy(self) -> Tensor:
        return self.concentration - self.rate.log() + lgamma(self.concentration) + \
            (1.0 - self.concentration) * digamma(self.concentration)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)
