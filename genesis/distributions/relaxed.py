"""Continuous relaxations of discrete distributions (Concrete / Gumbel-softmax), as
PyTorch's: LogitRelaxedBernoulli and RelaxedBernoulli (its sigmoid), ExpRelaxedCategorical
and RelaxedOneHotCategorical (its exp). `rsample` is reparameterised (uniform noise through
logs), so gradients reach the logits; `temperature` sets how close samples sit to the
corners.

>>> import genesis
>>> d = RelaxedOneHotCategorical(genesis.tensor(0.5), logits=genesis.zeros(3))
>>> s = d.rsample((4,))
>>> tuple(s.shape), bool(((s.sum(-1) - 1).abs() < 1e-5).all())
((4, 3), True)
"""
from __future__ import annotations

from ..creation import full_like
from ..ops.softmax import logsumexp
from ..ops.special_functions import lgamma
from ..tensor import Tensor
from . import constraints
from .discrete import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import binary_parameters, clamp_probs, draw

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical",
           "RelaxedOneHotCategorical"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample, given `probs` or `logits`."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self.probs, self.logits = binary_parameters(probs, logits)
        super().__init__(tuple(self.logits.shape), validate_args=validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        probs = clamp_probs(self.probs)
        uniforms = clamp_probs(draw(probs, "random", self._extended(sample_shape)))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = self.logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxed distribution as a transform of its base: the base's temperature, logits and
    probabilities are its own."""

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    """A sample in (0, 1) that approaches a Bernoulli(probs) draw as temperature -> 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample: a log-softmax of Gumbel-perturbed logits
    over the last dimension, divided by the temperature."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(tuple(self._categorical.batch_shape), tuple(self._categorical.param_shape[-1:]),
                         validate_args=validate_args)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape=()) -> Tensor:
        uniforms = clamp_probs(draw(self.logits, "random", self._extended(sample_shape)))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - logsumexp(scores, -1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self.event_shape[0]
        log_scale = lgamma(full_like(self.temperature, float(k))) - self.temperature.log() * (-(k - 1))
        score = self.logits - value * self.temperature
        return (score - logsumexp(score, -1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A point of the simplex that approaches a one-hot Categorical draw as temperature -> 0
    (the Gumbel-softmax distribution)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args),
                         ExpTransform(), validate_args=validate_args)
