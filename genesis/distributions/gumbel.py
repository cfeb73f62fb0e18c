"""Gumbel(loc, scale): the law of maxima, as PyTorch builds it: a Uniform pushed through
-log, negation, -log and loc - scale·x (so cdf and icdf come from the transforms)."""
from __future__ import annotations

import math

from ..creation import full_like, ones_like
from ..dtypes import finfo
from ..tensor import Tensor
from . import constraints
from .continuous import Uniform
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Gumbel"]

EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): cdf exp(-exp(-(x - loc) / scale)).

    >>> import genesis
    >>> round(Gumbel(0.0, 1.0).cdf(genesis.tensor(0.0)).item(), 6)  # e⁻¹
    0.367879
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps),
                       validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> "Gumbel":
        new = super().expand(batch_shape, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return new

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)
