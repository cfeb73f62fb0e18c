"""OneHotCategorical: a Categorical whose samples are one-hot vectors over the categories."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..nn._composite_functions import one_hot
from ..sizes import Size
from ..tensor import Tensor
from . import constraints
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """One of K categories, as a one-hot vector of length K (the event).

    >>> import genesis
    >>> d = OneHotCategorical(probs=genesis.tensor([0.25, 0.75]))
    >>> d.log_prob(genesis.tensor([0.0, 1.0])).exp().item(), tuple(d.sample((3,)).shape)
    (0.75, (3, 2))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(tuple(self._categorical.batch_shape), tuple(self._categorical.param_shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> "OneHotCategorical":
        new = OneHotCategorical.__new__(OneHotCategorical)
        new.__dict__.update(self.__dict__)
        new._categorical = self._categorical.expand(batch_shape)
        new.batch_shape = Size(batch_shape)
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def _sample(self, sample_shape) -> Tensor:
        probs = self._categorical.probs
        return one_hot(self._categorical.sample(sample_shape), probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        probs = self._categorical.probs
        values = one_hot(self._categorical.enumerate_support(False).reshape(-1), n).to(probs.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose `rsample` passes gradients straight through to the
    probabilities: the one-hot sample plus (probs - probs.detach()) (a world model's discrete
    latents)."""

    has_rsample = True

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return self._sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
