"""Dirichlet(concentration): a distribution over probability vectors (the simplex)."""
from __future__ import annotations

from ..nn._composite_functions import one_hot
from ..ops.composites import xlogy
from ..ops.special_functions import digamma, lgamma
from ..ops.where import where
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma_sampling import DirichletSample

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """Dirichlet over vectors of the last dimension of `concentration`.

    >>> import genesis
    >>> round(Dirichlet(genesis.ones(3)).log_prob(genesis.tensor([0.2, 0.3, 0.5])).item(), 6)  # log 2
    0.693147
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    batched_params = ("concentration",)

    def __init__(self, concentration: Tensor, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        return DirichletSample.apply(self.concentration.expand(self._extended(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        above_one = (self.concentration - 1).clamp(min=0.0)
        mode = above_one / above_one.sum(-1, keepdim=True)
        # where every concentration is below 1 the density peaks at the vertex of the largest
        corner = one_hot(mode.argmax(-1), above_one.shape[-1]).to(mode.dtype)
        all_below = (self.concentration < 1).all(-1, keepdim=True)
        return where(all_below, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(total) - (k - total) * digamma(total) - \
            ((c - 1.0) * digamma(c)).sum(-1)
