"""StudentT(df, loc, scale) and HalfNormal(scale): the heavy-tailed likelihood of robust
regression, and the usual prior on a scale."""
from __future__ import annotations

import math

from ..ops.special_functions import digamma, lgamma
from ..tensor import Tensor
from . import constraints
from .continuous import Normal
from .distribution import Distribution
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import broadcast_all, draw

__all__ = ["StudentT", "HalfNormal"]


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, shifted by `loc` and scaled by `scale`; samples
    are reparameterised (a normal over the root of a chi-squared draw, as PyTorch's).

    >>> import genesis
    >>> d = StudentT(genesis.tensor(3.0))
    >>> round(d.log_prob(genesis.tensor(0.0)).item(), 6), d.variance.item()
    (-1.000889, 3.0)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    batched_params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Gamma(0.5 * self.df, 0.5 * self.df.new_ones(()), validate_args=False)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc.where(self.df > 1, self._filled(self.loc, float("nan")))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        infinite = self._filled(self.loc, float("inf")).where(self.df > 1,
                                                               self._filled(self.loc, float("nan")))
        return finite.where(self.df > 2, infinite)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        normal = draw(self.df, "standard_normal", shape)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * normal * (chi2 / self.df).rsqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normaliser = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + \
            lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0))
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - normaliser

    def entropy(self) -> Tensor:
        log_beta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return self.scale.log() + 0.5 * (self.df + 1) * (
            digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df)) + 0.5 * self.df.log() + log_beta


class HalfNormal(TransformedDistribution):
    """|X| with X ~ Normal(0, scale).

    >>> import genesis
    >>> round(HalfNormal(genesis.tensor(1.0)).mean.item(), 6)  # sqrt(2 / pi)
    0.797885
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=validate_args), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(()).expand(self.batch_shape)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.where(value >= 0, self._filled(log_prob, float("-inf")))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
