"""Bernoulli and Categorical distributions, given probabilities or logits."""
from __future__ import annotations

from ..creation import arange
from ..nn._pointwise_losses import binary_cross_entropy_with_logits
from ..ops.gather import gather
from ..ops.composites import broadcast_tensors
from ..ops.random_fills import multinomial
from ..ops.softmax import logsumexp
from ..dtypes import finfo
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import (binary_parameters, broadcast_all, draw, logits_to_probs, probs_to_logits,
                    require_probs_or_logits)

__all__ = ["Bernoulli", "Categorical"]


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0.

    >>> round(Bernoulli(probs=0.25).entropy().item(), 6)
    0.562335
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    batched_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = binary_parameters(probs, logits)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape) -> Tensor:
        draws = draw(self.probs, "random", self._extended(sample_shape))
        return (draws < self.probs).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(2, dtype=self.probs.dtype, device=self.probs._device)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values


class Categorical(Distribution):
    """One of K categories (the last dim of `probs` or `logits`), drawn with those weights.

    >>> import genesis
    >>> Categorical(probs=genesis.tensor([0.25, 0.75])).log_prob(genesis.tensor(1)).exp().item()
    0.75
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    batched_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        require_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = probs_to_logits(self.probs)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logsumexp(logits, -1, keepdim=True)
            self.probs = logits_to_probs(self.logits)
        self._num_events = self.probs.shape[-1]
        super().__init__(tuple(self.probs.shape[:-1]), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self) -> Tensor:
        return self._filled(self.probs, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self._filled(self.probs, float("nan"))

    def _sample(self, sample_shape) -> Tensor:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        count = 1
        for extent in shape:
            count *= extent
        rows = self.probs.reshape(-1, self._num_events)
        drawn = multinomial(rows, count, replacement=True)  # (rows, count)
        return drawn.transpose(0, 1).reshape(shape + tuple(self.batch_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return gather(log_pmf, -1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, device=self.probs._device)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values
