"""Multinomial(total_count, probs): counts of each of K categories in `total_count` draws of a
Categorical, as PyTorch's (the last dimension of probs or logits indexes the categories)."""
from __future__ import annotations

import math

from ..nn._composite_functions import one_hot
from ..ops.composites import broadcast_tensors
from ..ops.where import where
from ..sizes import Size
from ..tensor import Tensor
from . import constraints
from .binomial import Binomial
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """P(x) = n! / (x₁! ⋯ x_K!) · p₁^x₁ ⋯ p_K^x_K for counts x summing to n = total_count.

    `probs` (nonnegative, normalized to sum to 1) or `logits` (unnormalized log-probabilities)
    are given over the last dimension. `sample` and `entropy` need the one int total_count;
    `log_prob` takes counts of any total.

    >>> import genesis
    >>> dist = Multinomial(2, probs=genesis.tensor([1.0, 1.0]))
    >>> dist.log_prob(genesis.tensor([1.0, 1.0])).exp().item()
    0.5
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        # as PyTorch's, the Categorical validates probs or logits itself, whatever validate_args
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(tuple(self._categorical.batch_shape), tuple(self.probs.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> "Multinomial":
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def _sample(self, sample_shape) -> Tensor:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        draws = self._categorical.sample((self.total_count,) + shape)
        counts = one_hot(draws, self.event_shape[0]).sum(0)
        return counts.to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_tensors(self.logits, value)
        # a category of probability 0 counted 0 times contributes 0 · log 0 = 0
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self) -> Tensor:
        # lgamma(n + 1) in the dtype of probs (PyTorch's takes it in float32 from an int tensor)
        term1 = self.total_count * self._categorical.entropy() - math.lgamma(self.total_count + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * (support + 1).lgamma()).sum(0).sum(-1)
        return term1 + term2
