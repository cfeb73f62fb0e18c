"""Beta(concentration1, concentration0): a distribution on [0, 1], the first coordinate of a
Dirichlet over (x, 1 - x), as PyTorch builds it."""
from __future__ import annotations

import numbers

from ..creation import tensor as make_tensor
from ..ops.join import stack
from ..sizes import Size
from ..tensor import Tensor
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """Beta(a, b) with density x^(a-1) (1-x)^(b-1) / B(a, b).

    >>> import genesis
    >>> Beta(2.0, 2.0).mean.item()
    0.5
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            both = make_tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(tuple(self._dirichlet.batch_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> "Beta":
        new = Beta.__new__(Beta)
        new.__dict__.update(self.__dict__)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        new.batch_shape = Size(batch_shape)
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
