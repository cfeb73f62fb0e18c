"""Probability distributions (PyTorch's `torch.distributions`): Normal, Uniform,
MultivariateNormal, Bernoulli, Categorical, Independent (a batch read as one event), and
`kl_divergence` between two of a kind.
Their log-probabilities, entropies and reparameterised samples (`rsample`) are
compositions of genesis ops, so gradients flow to their parameters."""
from __future__ import annotations

from .distribution import Distribution
from .kl import kl_divergence
from .discrete import Bernoulli, Categorical
from .continuous import Normal, Uniform
from .multivariate_normal import MultivariateNormal
from .independent import Independent

__all__ = ["Distribution", "Normal", "Uniform", "MultivariateNormal", "Bernoulli", "Categorical",
           "Independent", "kl_divergence"]
