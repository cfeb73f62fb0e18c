"""NegativeBinomial(total_count, probs): successes before `total_count` failures, each trial
a success with probability `probs`; sampled as PyTorch does, a Poisson of a Gamma rate."""
from __future__ import annotations

from ..nn._composite_functions import logsigmoid
from ..ops.where import where
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, draw, logits_to_probs, probs_to_logits, require_probs_or_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """P(k) = C(k + r - 1, k) pᵏ (1 - p)ʳ for total_count r (any real r ≥ 0) and `probs` p
    (or `logits`).

    >>> import genesis
    >>> NegativeBinomial(2.0, probs=genesis.tensor(0.5)).log_prob(genesis.tensor(1.0)).exp().item()
    0.25
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    batched_params = ("total_count", "probs", "logits")

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        require_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        count, param = broadcast_all(total_count, given)
        self.total_count = count.to(param.dtype)
        # only the parameter given is validated (PyTorch derives the other lazily): logits of
        # 40 are valid although their probs round to 1, outside [0, 1)
        if probs is not None:
            self.probs = param
            super().__init__(tuple(param.shape), validate_args=validate_args)
            self.logits = probs_to_logits(param, is_binary=True)
        else:
            self.logits = param
            super().__init__(tuple(param.shape), validate_args=validate_args)
            self.probs = logits_to_probs(param, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def _sample(self, sample_shape) -> Tensor:
        # total_count may be 0 (a point mass at 0), so the Gamma is not validated
        rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
        return draw(rate, "poisson", tuple(rate.shape), rate._data)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + \
            value * logsigmoid(self.logits)
        # total_count 0 and value 0 have probability 1, but lgamma(0) is infinite: there the
        # count is taken as 1, which makes the normalization exactly 0 (PyTorch masks it to 0
        # afterwards, through an inf - inf)
        count = where(self.total_count + value == 0.0, 1.0, self.total_count)
        log_normalization = -(count + value).lgamma() + (1.0 + value).lgamma() + count.lgamma()
        return log_unnormalized_prob - log_normalization
