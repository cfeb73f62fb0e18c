"""MixtureSameFamily: a mixture of K components of one family, as PyTorch's (a Gaussian
mixture is MixtureSameFamily(Categorical(weights), Normal(locs, scales)))."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..ops.gather import gather
from ..ops.softmax import log_softmax, logsumexp
from ..sizes import Size
from ..tensor import Tensor
from . import constraints
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Pick a component with `mixture_distribution` (a Categorical over K), then draw from that
    component of `component_distribution`, whose rightmost batch dimension is K.

    >>> import genesis
    >>> from genesis.distributions import Normal
    >>> mix = MixtureSameFamily(Categorical(probs=genesis.tensor([0.5, 0.5])),
    ...                         Normal(genesis.tensor([-1.0, 1.0]), genesis.tensor([1.0, 1.0])))
    >>> mix.mean.item(), mix.variance.item()
    (0.0, 2.0)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an instance of "
                             "genesis.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "genesis.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({Size(mixture_batch)}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({Size(component_batch)})")
        mixture_k = mixture_distribution.logits.shape[-1]
        component_k = component_distribution.batch_shape[-1]
        if mixture_k != component_k:
            raise ValueError(f"`mixture_distribution component` ({mixture_k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({component_k})")
        self._num_component = mixture_k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, tuple(component_distribution.event_shape),
                         validate_args=validate_args)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    def expand(self, batch_shape, _instance=None) -> "MixtureSameFamily":
        batch_shape = Size(batch_shape)
        new = MixtureSameFamily.__new__(MixtureSameFamily)
        new.__dict__.update(self.__dict__)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new.batch_shape = batch_shape
        return new

    def _pad(self, x: Tensor) -> Tensor:
        """x with a component dimension, broadcasting against the components."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        """Mixture weights shaped to multiply component values (batch..., K, event...)."""
        batch_ndims, mixture_ndims = len(self.batch_shape), len(self._mixture_distribution.batch_shape)
        pad = 0 if mixture_ndims == 1 else batch_ndims - mixture_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        within = (probs * self._component_distribution.variance).sum(dim)
        between = (probs * (self._component_distribution.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return within + between

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix_prob = log_softmax(self._mixture_distribution.logits, -1)
        return logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=()) -> Tensor:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        with no_grad():
            gather_dim = len(shape) + len(self.batch_shape)
            event_shape = tuple(self.event_shape)
            chosen = self._mixture_distribution.sample(shape)
            chosen_shape = tuple(chosen.shape)
            drawn = self._component_distribution.sample(shape)      # [S, B, K, E]
            index = chosen.reshape(chosen_shape + (1,) * (len(event_shape) + 1))
            index = index.expand(chosen_shape + (1,) + event_shape)
            return gather(drawn, gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n"
                f"  {self._component_distribution!r})")
