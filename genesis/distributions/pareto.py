"""Pareto(scale, alpha), type I: as PyTorch builds it, an Exponential(alpha) pushed through
exp and scale·x, so log_prob, cdf, icdf and rsample come from the transforms."""
from __future__ import annotations

from ..tensor import Tensor
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """Pareto with minimum `scale` and tail index `alpha`: P(X > x) = (scale / x)^alpha, x ≥ scale.

    >>> import genesis
    >>> Pareto(1.0, 2.0).cdf(genesis.tensor(2.0)).item()  # 1 - (1/2)²
    0.75
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> "Pareto":
        new = super().expand(batch_shape, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return new

    @property
    def mean(self) -> Tensor:
        alpha = self.alpha.clamp(min=1)   # inf for alpha ≤ 1
        return alpha * self.scale / (alpha - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        alpha = self.alpha.clamp(min=2)   # inf for alpha ≤ 2
        return self.scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
