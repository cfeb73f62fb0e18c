"""The base of genesis's distributions: shapes, and sample() as rsample() without a graph."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["Distribution"]


class Distribution:
    """A batch of distributions of shape `batch_shape`, each over events of `event_shape`."""

    has_rsample = False

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args=None):
        self.batch_shape, self.event_shape = tuple(batch_shape), tuple(event_shape)
        # as in PyTorch, arguments and values are checked unless validate_args=False
        self._validate_args = True if validate_args is None else bool(validate_args)

    def _check(self, valid: bool, message: str) -> None:
        """Raise ValueError(message) when checking is on and `valid` is False."""
        if self._validate_args and not valid:
            raise ValueError(message)

    def sample(self, sample_shape=()) -> Tensor:
        """Samples of shape sample_shape + batch_shape + event_shape, with no gradient."""
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sample (rsample); "
                                  "use sample()")

    def _sample(self, sample_shape) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define its sampling")

    def _extended(self, sample_shape) -> tuple:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        return shape + self.batch_shape + self.event_shape

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={self.batch_shape})"
