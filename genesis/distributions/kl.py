"""KL(p || q) between two distributions, from a registry of closed forms as PyTorch's
`torch.distributions.kl`: `register_kl(P, Q)` adds one, and `kl_divergence` uses the most
specific registered pair for the types of p and q (a Gumbel pair before the generic
TransformedDistribution pair)."""
from __future__ import annotations

import math

from ..creation import full_like
from ..linalg import solve_triangular
from ..ops.composites import broadcast_shapes, xlogy
from ..ops.smooth_activation import softplus
from ..ops.special_functions import digamma, lgamma
from ..ops.unary import erf
from ..ops.where import where
from ..tensor import Tensor
from .beta import Beta
from .binomial import Binomial
from .cauchy import Cauchy
from .continuous import Normal, Uniform
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import EULER_GAMMA, Gumbel
from .independent import Independent, sum_rightmost
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}


def register_kl(type_p: type, type_q: type):
    """Decorator registering `function(p, q)` as KL(p || q) for p of `type_p`, q of `type_q`.

    >>> from genesis.distributions import Normal
    >>> class Wide(Normal):
    ...     pass
    >>> @register_kl(Wide, Wide)
    ... def _kl_wide(p, q):
    ...     return p.loc * 0
    >>> kl_divergence(Wide(0.0, 1.0), Wide(1.0, 1.0)).item()
    0.0
    """
    if not (isinstance(type_p, type) and isinstance(type_q, type)):
        raise TypeError(f"Expected type_p and type_q to be classes, got {type_p} and {type_q}")

    def decorator(function):
        _KL_REGISTRY[type_p, type_q] = function
        return function
    return decorator


def _dispatch(type_p: type, type_q: type):
    """The registered function for the closest pair of ancestors of (type_p, type_q)."""
    best, best_rank = None, None
    for (super_p, super_q), function in _KL_REGISTRY.items():
        if issubclass(type_p, super_p) and issubclass(type_q, super_q):
            rank = (type_p.__mro__.index(super_p), type_q.__mro__.index(super_q))
            if best_rank is None or rank < best_rank:
                best, best_rank = function, rank
    return best


def kl_divergence(p, q) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over p's and q's batch shape.

    >>> import genesis
    >>> from genesis.distributions import Normal
    >>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item()
    0.0
    """
    function = _dispatch(type(p), type(q))
    if function is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return function(p, q)


def _infinite_where(condition: Tensor, value: Tensor) -> Tensor:
    return where(condition, math.inf, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any().item()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _infinite_where(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * EULER_GAMMA
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + EULER_GAMMA)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + lgamma(q.concentration) + q.concentration * EULER_GAMMA - (1 + EULER_GAMMA)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    k = p.event_shape[0]
    half_log_det_ratio = q._half_log_det() - p._half_log_det()
    shape = broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    q_tril = q.scale_tril.expand(shape + (k, k))
    p_tril = p.scale_tril.expand(shape + (k, k))
    diff = (q.loc - p.loc).unsqueeze(-1).expand(shape + (k, 1))
    trace = (solve_triangular(q_tril, p_tril, upper=False) ** 2).sum((-2, -1))
    mahalanobis = (solve_triangular(q_tril, diff, upper=False) ** 2).sum((-2, -1))
    return half_log_det_ratio + 0.5 * (trace + mahalanobis - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# Pairs whose supports differ so that p puts mass where q has none: KL is infinite.
def _infinite_like(tensor: Tensor) -> Tensor:
    return full_like(tensor, math.inf)


_INFINITE_PAIRS = {
    (Exponential, Beta): "rate", (Exponential, Uniform): "rate",
    (Gamma, Beta): "concentration", (Gamma, Uniform): "concentration",
    (Gumbel, Beta): "loc", (Gumbel, Exponential): "loc", (Gumbel, Gamma): "loc", (Gumbel, Uniform): "loc",
    (Laplace, Beta): "loc", (Laplace, Exponential): "loc", (Laplace, Gamma): "loc", (Laplace, Uniform): "loc",
    (Normal, Beta): "loc", (Normal, Exponential): "loc", (Normal, Gamma): "loc", (Normal, Uniform): "loc",
    (Poisson, Bernoulli): "rate", (Poisson, Binomial): "rate",
    # a Pareto lives on [scale, ∞): nothing else here fits inside it, and it fits in no interval
    (Beta, Pareto): "concentration1", (Exponential, Pareto): "rate", (Gamma, Pareto): "concentration",
    (Gumbel, Pareto): "loc", (Laplace, Pareto): "loc", (Normal, Pareto): "loc",
    (Pareto, Beta): "scale", (Pareto, Uniform): "scale",
}


def _infinite_kl(parameter: str):
    def kl(p, q):
        return _infinite_like(getattr(p, parameter))
    return kl


for (_type_p, _type_q), _parameter in _INFINITE_PAIRS.items():
    register_kl(_type_p, _type_q)(_infinite_kl(_parameter))


# Cross-family pairs: KL = -H(p) - E_p[log q(x)], with E_p of the moments log q needs.
def _normal_cross_entropy_terms(q, second_moment_about_q):
    """-E_p[log N(x; q.loc, q.scale)] from E_p[(x - q.loc)²]."""
    return 0.5 * math.log(2 * math.pi) + q.scale.log() + second_moment_about_q / (2 * q.scale.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    second = 2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy_terms(q, second)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    second = (p.high - p.low).pow(2) / 12 + ((p.high + p.low) / 2 - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy_terms(q, second)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    second = 2 / p.rate.pow(2) - 2 * q.loc / p.rate + q.loc.pow(2)
    return -p.entropy() + _normal_cross_entropy_terms(q, second)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    mean = p.concentration / p.rate
    second = p.concentration / p.rate.pow(2) + (mean - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy_terms(q, second)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    second = (math.pi ** 2 / 6) * p.scale.pow(2) + (p.loc + p.scale * EULER_GAMMA - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy_terms(q, second)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(μ, σ²): σ √(2/π) exp(-d²/2σ²) + d erf(d / σ√2), d = μ - m
    diff = p.loc - q.loc
    standardized = diff / p.scale
    mean_abs = math.sqrt(2 / math.pi) * p.scale * (-0.5 * standardized.pow(2)).exp() + \
        diff * erf(math.sqrt(0.5) * standardized)
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # log q(x) = -log b - z - exp(-z), z = (x - m) / b; E_p[exp(-z)] is a log-normal mean
    shift = (p.loc - q.loc) / q.scale
    return -p.entropy() + q.scale.log() + shift + (-shift + 0.5 * (p.scale / q.scale).pow(2)).exp()


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * (p.high + p.low) / 2
    return _infinite_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    # E[log x] for x ~ U[l, h]: (h log h - h - l log l + l) / (h - l)
    mean_log = (xlogy(p.high, p.high) - p.high - xlogy(p.low, p.low) + p.low) / (p.high - p.low)
    result = -p.entropy() - xlogy(q.concentration, q.rate) + lgamma(q.concentration) - \
        (q.concentration - 1) * mean_log + q.rate * (p.high + p.low) / 2
    return _infinite_where(p.low < 0, result)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - p.probs * q.rate.log() + q.rate


# Pareto pairs, as PyTorch's (after Gil's thesis): infinite where p's support starts below q's,
# or where the moment of p that log q needs is infinite (alpha ≤ 1 for the mean, ≤ 2 the variance)
@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _infinite_where(p.scale < q.scale, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    result = (p.alpha / scale_rate).log() - p.alpha.reciprocal() + \
        p.alpha * scale_rate / (p.alpha - 1) - 1
    return _infinite_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    result = p.alpha.log() - common_term + lgamma(q.concentration) - q.concentration * q.rate.log() + \
        (1 - q.concentration) * common_term + q.rate * p.alpha * p.scale / (p.alpha - 1) - 1
    return _infinite_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    second = p.alpha * common_term.pow(2) / (p.alpha - 2) + (p.alpha * common_term - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + second / (2 * q.scale.pow(2)) - 1
    return _infinite_where(p.alpha <= 2, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    mean_log = (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    result = mean_log * (q.alpha + 1) - (q.alpha * q.scale.pow(q.alpha) * width).log()
    return _infinite_where(p.low < q.scale, result)
