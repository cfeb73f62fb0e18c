"""Independent: a batch of distributions read as one distribution over their rightmost batch
dimensions, as PyTorch's `torch.distributions.Independent` (a diagonal Gaussian policy is
`Independent(Normal(mean, std), 1)`)."""
from __future__ import annotations

from ..sizes import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def sum_rightmost(value: Tensor, dims: int) -> Tensor:
    """`value` summed over its last `dims` dimensions (itself when dims is 0)."""
    return value.sum(tuple(range(-dims, 0))) if dims else value


class Independent(Distribution):
    """`base_distribution` with its last `reinterpreted_batch_ndims` batch dimensions made
    event dimensions: log_prob and entropy sum over them.

    >>> import genesis
    >>> from genesis.distributions import Normal
    >>> d = Independent(Normal(genesis.zeros(3, 2), genesis.ones(3, 2)), 1)
    >>> tuple(d.batch_shape), tuple(d.event_shape), tuple(d.log_prob(genesis.zeros(3, 2)).shape)
    ((3,), (2,), (3,))
    """

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args=None):
        batch = base_distribution.batch_shape
        if not 0 <= reinterpreted_batch_ndims <= len(batch):
            raise ValueError("Expected reinterpreted_batch_ndims <= "
                             "len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(batch)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        split = len(batch) - reinterpreted_batch_ndims
        super().__init__(batch[:split], batch[split:] + base_distribution.event_shape,
                         validate_args=validate_args)

    arg_constraints: dict = {}

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        return constraints.independent(support, self.reinterpreted_batch_ndims) \
            if self.reinterpreted_batch_ndims else support

    def expand(self, batch_shape, _instance=None) -> "Independent":
        batch_shape = Size(batch_shape)
        reinterpreted = tuple(self.event_shape[:self.reinterpreted_batch_ndims])
        new = Independent.__new__(Independent)
        new.__dict__.update(self.__dict__)
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + reinterpreted)
        new.batch_shape = batch_shape
        return new

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    @property
    def stddev(self) -> Tensor:
        return self.base_dist.stddev

    def sample(self, sample_shape=()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
