"""Weibull(scale, concentration): as PyTorch builds it, an Exponential(1) pushed through
x^(1/concentration) and scale·x, so cdf, icdf and rsample come from the transforms."""
from __future__ import annotations

from ..creation import ones_like
from ..ops.special_functions import lgamma
from ..tensor import Tensor
from . import constraints
from .exponential import Exponential
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull with scale λ and shape k: cdf 1 - exp(-(x/λ)ᵏ) on (0, ∞).

    >>> import genesis
    >>> round(Weibull(2.0, 1.0).cdf(genesis.tensor(2.0)).item(), 6)  # 1 - e⁻¹
    0.632121
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self) -> list:
        return [PowerTransform(exponent=self.concentration_reciprocal),
                AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None) -> "Weibull":
        new = super().expand(batch_shape, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        new.transforms = new._transforms()
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        # nan for concentration < 1 (a negative base to a fractional power), as PyTorch's
        return self.scale * ((self.concentration - 1) / self.concentration).pow(
            self.concentration.reciprocal())

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (lgamma(1 + 2 * self.concentration_reciprocal).exp() -
                                    (2 * lgamma(1 + self.concentration_reciprocal)).exp())

    def entropy(self) -> Tensor:
        return EULER_GAMMA * (1 - self.concentration_reciprocal) + \
            (self.scale * self.concentration_reciprocal).log() + 1
