"""Bernoulli and Categorical distributions, given probabilities or logits."""
from __future__ import annotations

from ..creation import tensor as make_tensor
from ..nn._pointwise_losses import binary_cross_entropy_with_logits
from ..ops.gather import gather
from ..ops.random_fills import multinomial
from ..ops.softmax import logsumexp, softmax
from ..random import generator_for
from ..tensor import Tensor, wrap_array
from .distribution import Distribution

__all__ = ["Bernoulli", "Categorical"]


def _one_of(probs, logits, name: str) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits, "Bernoulli")
        if probs is not None:
            self.probs = probs if isinstance(probs, Tensor) else make_tensor(float(probs))
            clamped = self.probs.clamp(1.1920928955078125e-07, 1 - 1.1920928955078125e-07)
            self.logits = clamped.log() - (1 - clamped).log()
        else:
            self.logits = logits if isinstance(logits, Tensor) else make_tensor(float(logits))
            self.probs = self.logits.sigmoid()
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape) -> Tensor:
        shape = self._extended(sample_shape)
        draws = generator_for(self.probs._device).random(shape)
        return wrap_array((draws < self.probs._data).astype(self.probs._data.dtype), self.probs._device)

    def log_prob(self, value: Tensor) -> Tensor:
        logits = self.logits.expand(*value.shape) if value.shape != self.logits.shape else self.logits
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    """One of K categories (the last dim of `probs` or `logits`), drawn with those weights."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits, "Categorical")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=1.1920928955078125e-07).log()
        else:
            self.logits = logits - logsumexp(logits, -1, keepdim=True)
            self.probs = softmax(self.logits, -1)
        super().__init__(tuple(self.probs.shape[:-1]), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError("Categorical has no mean (its categories are labels)")

    def _sample(self, sample_shape) -> Tensor:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        count = 1
        for extent in shape:
            count *= extent
        rows = self.probs.reshape(-1, self.probs.shape[-1])
        drawn = multinomial(rows, count, replacement=True)  # (rows, count)
        return drawn.transpose(0, 1).reshape(shape + self.batch_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        classes = self.logits.shape[-1]
        self._check(bool(((value._data >= 0) & (value._data < classes)).all()),
                    f"Categorical.log_prob: values must be class indices in [0, {classes})")
        logits = self.logits.expand(*(tuple(value.shape) + (classes,)))
        return gather(logits, -1, value.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> Tensor:
        return -(self.probs * self.logits).sum(-1)
