"""Binomial(total_count, probs): successes in `total_count` independent trials."""
from __future__ import annotations

from ..creation import arange
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import binary_parameters, draw

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0), with gradient ½ at 0 (as PyTorch's, so that gradients agree there)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """P(k) = C(n, k) pᵏ (1 - p)ⁿ⁻ᵏ, given `probs` p or `logits`.

    >>> import genesis
    >>> Binomial(4, probs=genesis.tensor(0.5)).log_prob(genesis.tensor(2.0)).exp().item()
    0.375
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    batched_params = ("total_count", "probs", "logits")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        count, self.probs, self.logits = binary_parameters(probs, logits, total_count)
        self.total_count = count.to(self.probs.dtype)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def _sample(self, sample_shape) -> Tensor:
        counts = self.total_count._data.astype("int64")
        return draw(self.probs, "binomial", self._extended(sample_shape), counts, self.probs._data)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        # n log(1 + e^logits), written to stay finite for large |logits|
        normalize_term = self.total_count * _clamp_by_zero(self.logits) + \
            self.total_count * (-self.logits.abs()).exp().log1p() - log_factorial_n
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Tensor:
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total_count, dtype=self.probs.dtype, device=self.probs._device)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values
