"""Normal and Uniform distributions."""
from __future__ import annotations

import math

from ..creation import tensor as make_tensor
from ..ops.composites import broadcast_tensors
from ..ops.unary import erf
from ..ops.where import where
from ..random import generator_for
from ..tensor import Tensor, wrap_array
from .distribution import Distribution

__all__ = ["Normal", "Uniform"]


def _as_tensors(*values) -> tuple:
    """The parameters as tensors of one shape (numbers become float32 tensors)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype, device = (None, None) if like is None else (like.dtype, like._device)
    return broadcast_tensors(*(v if isinstance(v, Tensor) else make_tensor(float(v), dtype=dtype, device=device)
                               for v in values))


class Normal(Distribution):
    """N(loc, scale²).

    >>> import genesis
    >>> Normal(0.0, 1.0).log_prob(genesis.tensor(0.0)).item()  # -log √(2π)
    -0.9189385...
    """

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _as_tensors(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)
        self._check(bool((self.scale._data > 0).all()),
                    f"Normal: scale must be positive, got {self.scale.tolist()}")

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    @property
    def stddev(self) -> Tensor:
        return self.scale   # as PyTorch: not sqrt(scale²), which may differ in the last bit

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        noise = generator_for(self.loc._device).standard_normal(shape).astype(self.loc._data.dtype)
        return self.loc + self.scale * wrap_array(noise, self.loc._device)

    def log_prob(self, value: Tensor) -> Tensor:
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        return 0.5 * (1 + erf((value - self.loc) / (self.scale * math.sqrt(2))))


class Uniform(Distribution):
    """U[low, high)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _as_tensors(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)
        self._check(bool((self.low._data < self.high._data).all()),
                    "Uniform: low must be less than high")

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        draws = generator_for(self.low._device).random(shape).astype(self.low._data.dtype)
        return self.low + (self.high - self.low) * wrap_array(draws, self.low._device)

    def log_prob(self, value: Tensor) -> Tensor:
        inside = (value >= self.low) & (value < self.high)
        self._check(bool(inside.all().item()), f"Uniform.log_prob: the value {value.tolist()} is "
                    "outside the support [low, high); pass validate_args=False to get -inf there")
        return where(inside, -(self.high - self.low).log(), -math.inf)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)
