"""Geometric(probs): the number of failures before the first success."""
from __future__ import annotations

from ..creation import zeros_like
from ..dtypes import finfo
from ..nn._pointwise_losses import binary_cross_entropy_with_logits
from ..ops.where import where
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import binary_parameters, broadcast_all, draw

__all__ = ["Geometric"]


class Geometric(Distribution):
    """P(k) = (1 - p)ᵏ p for k = 0, 1, 2, ...; given `probs` p in (0, 1] or `logits`.

    >>> import genesis
    >>> Geometric(probs=0.5).log_prob(genesis.tensor(1.0)).exp().item()
    0.25
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    batched_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = binary_parameters(probs, logits)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all().item()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive "
                             f"but found invalid values:\n{self.probs[~(self.probs > 0)]}")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def _sample(self, sample_shape) -> Tensor:
        u = draw(self.probs, "random", self._extended(sample_shape)).clamp(min=finfo(self.probs.dtype).tiny)
        return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)   # 0 · log 0 is 0 here
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
