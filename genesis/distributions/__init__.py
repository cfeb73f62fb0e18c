"""Probability distributions (PyTorch's `torch.distributions`), with `constraints`,
`transforms` and `kl_divergence`. Their log-probabilities, entropies and reparameterised
samples (`rsample`) are compositions of genesis ops, so gradients flow to their parameters."""
from __future__ import annotations

from . import constraints, transforms
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .discrete import Bernoulli, Categorical
from .continuous import Normal, Uniform
from .multivariate_normal import MultivariateNormal
from .independent import Independent
from .transformed_distribution import TransformedDistribution
from .cauchy import Cauchy
from .exponential import Exponential
from .gumbel import Gumbel
from .laplace import Laplace
from .log_normal import LogNormal
from .binomial import Binomial
from .geometric import Geometric
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .beta import Beta
from .dirichlet import Dirichlet
from .gamma import Gamma
from .chi2 import Chi2
from .weibull import Weibull
from .pareto import Pareto
from .negative_binomial import NegativeBinomial
from .multinomial import Multinomial
from .mixture_same_family import MixtureSameFamily
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli,
                      RelaxedOneHotCategorical)
from .student_t import HalfNormal, StudentT
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                         IndependentTransform, PowerTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StickBreakingTransform, TanhTransform, Transform)

__all__ = ["Distribution", "Normal", "Uniform", "MultivariateNormal", "Bernoulli", "Categorical",
           "Independent", "TransformedDistribution", "LogNormal", "Laplace",
           "Exponential", "Cauchy", "Gumbel", "OneHotCategorical", "Poisson",
           "Geometric", "Binomial", "Gamma", "Beta", "Dirichlet",
           "MixtureSameFamily", "OneHotCategoricalStraightThrough", "RelaxedBernoulli",
           "LogitRelaxedBernoulli", "RelaxedOneHotCategorical", "ExpRelaxedCategorical", "register_kl", "constraints", "kl_divergence", "transforms", "StudentT", "HalfNormal",
           "Chi2", "Weibull", "Pareto", "NegativeBinomial", "Multinomial",
           # the transforms, as torch.distributions re-exports them
           "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StickBreakingTransform", "TanhTransform", "Transform"]
