"""`LocationScale`: what Normal, Laplace and Cauchy share, a family of densities
f((x - loc) / scale) / scale on the real line, sampled as loc + scale * (a standard draw)."""
from __future__ import annotations

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LocationScale"]


class LocationScale(Distribution):
    """The shared part of a location-scale family: its parameters (`loc` real, `scale`
    positive, broadcast together: the batch shape), its real support, reparameterised
    samples, and its mode at `loc`. A family adds its mean, variance, sampler and densities.

    >>> import genesis
    >>> from genesis.distributions import Laplace
    >>> Laplace(genesis.tensor([0.0, 1.0]), 2.0).batch_shape, Laplace(0.5, 1.0).mode.item()
    (genesis.Size([2]), 0.5)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    batched_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mode(self) -> Tensor:
        return self.loc
