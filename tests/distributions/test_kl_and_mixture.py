"""kl_divergence for every pair genesis registers, against torch.distributions (values and
gradients to the parameters of both p and q, float64, broadcast, infinite where the
supports differ), its dispatch, and MixtureSameFamily (values, gradients, sampling, errors,
and a mixture-density-network loss)."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import leaves
from tests.helpers import torch_or_skip

LOC, SCALE = [[0.3], [-1.2]], [0.5, 1.7, 2.5]
POSITIVE, OTHER_POSITIVE = [[0.4], [3.0]], [0.5, 1.0, 4.0]
PARAMS = {
    "Normal": dict(loc=LOC, scale=SCALE), "Laplace": dict(loc=LOC, scale=SCALE),
    "Cauchy": dict(loc=LOC, scale=SCALE), "Gumbel": dict(loc=LOC, scale=SCALE),
    "LogNormal": dict(loc=LOC, scale=SCALE),
    "Exponential": dict(rate=[[0.5, 1.5, 4.0], [2.0, 0.1, 1.0]]),
    "Gamma": dict(concentration=POSITIVE, rate=OTHER_POSITIVE),
    "Beta": dict(concentration1=POSITIVE, concentration0=OTHER_POSITIVE),
    "Uniform": dict(low=[[0.1], [1.0]], high=[2.0, 3.0, 5.0]),
    "Poisson": dict(rate=[[0.5, 3.0, 12.0], [2.0, 0.1, 1.0]]),
    "Bernoulli": dict(probs=[[0.2, 0.5, 0.9], [0.05, 0.7, 0.3]]),
    "Geometric": dict(probs=[[0.2, 0.5, 0.9], [0.05, 0.7, 0.3]]),
    "Binomial": dict(total_count=[[5.0], [5.0]], probs=[[0.2, 0.5, 0.9], [0.05, 0.7, 0.3]]),
    "Categorical": dict(probs=[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    "OneHotCategorical": dict(logits=[[0.2, -1.0, 2.0], [1.5, 0.0, -0.3]]),
    "Dirichlet": dict(concentration=[[0.4, 2.0, 5.0], [1.5, 0.8, 3.0]]),
    "Chi2": dict(df=[[0.7, 2.0, 5.5], [1.5, 3.0, 9.0]]),
    # alpha ≤ 1 (infinite mean), ≤ 2 (infinite variance) and above
    "Pareto": dict(scale=[[0.4], [3.0]], alpha=[0.7, 1.5, 3.0]),
}
# q's parameters differ from p's (same shapes, so p and q broadcast)
OTHER = {
    "Normal": dict(loc=[[1.0], [0.2]], scale=[1.1, 0.3, 4.0]), "Laplace": dict(loc=[[1.0], [0.2]], scale=[1.1, 0.3, 4.0]),
    "Cauchy": dict(loc=[[1.0], [0.2]], scale=[1.1, 0.3, 4.0]), "Gumbel": dict(loc=[[1.0], [0.2]], scale=[1.1, 0.3, 4.0]),
    "LogNormal": dict(loc=[[1.0], [0.2]], scale=[1.1, 0.3, 4.0]),
    "Exponential": dict(rate=[[1.5, 0.5, 2.0], [0.3, 1.0, 3.0]]),
    "Gamma": dict(concentration=[[2.0], [0.7]], rate=[1.5, 0.3, 2.0]),
    "Beta": dict(concentration1=[[2.0], [0.7]], concentration0=[1.5, 0.3, 2.0]),
    "Uniform": dict(low=[[-1.0], [0.5]], high=[2.5, 3.0, 6.0]),
    "Poisson": dict(rate=[[1.5, 0.5, 2.0], [0.3, 1.0, 3.0]]),
    "Bernoulli": dict(probs=[[0.6, 0.1, 0.5], [0.3, 0.3, 0.9]]),
    "Geometric": dict(probs=[[0.6, 0.1, 0.5], [0.3, 0.3, 0.9]]),
    "Binomial": dict(total_count=[[5.0], [5.0]], probs=[[0.6, 0.1, 0.5], [0.3, 0.3, 0.9]]),
    "Categorical": dict(probs=[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]),
    "OneHotCategorical": dict(logits=[[1.2, 0.0, -2.0], [0.5, 1.0, 0.3]]),
    "Dirichlet": dict(concentration=[[1.4, 0.5, 2.0], [0.5, 2.8, 1.0]]),
    "Chi2": dict(df=[[1.5, 4.0, 2.0], [0.5, 3.0, 7.0]]),
    "Pareto": dict(scale=[[0.5], [0.2]], alpha=[1.5, 0.3, 2.0]),   # p's support starts below q's in row 0
}
SAME_FAMILY = sorted(PARAMS)
CROSS = [("Laplace", "Normal"), ("Uniform", "Normal"), ("Exponential", "Normal"), ("Gamma", "Normal"),
         ("Gumbel", "Normal"), ("Normal", "Laplace"), ("Normal", "Gumbel"), ("Uniform", "Exponential"),
         ("Uniform", "Gamma"), ("Bernoulli", "Poisson"), ("Exponential", "Gamma"), ("Gamma", "Exponential"),
         ("Normal", "Uniform"), ("Laplace", "Beta"), ("Gumbel", "Exponential"), ("Poisson", "Binomial"),
         ("Gamma", "Uniform"), ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
         ("Uniform", "Pareto"), ("Exponential", "Pareto"), ("Pareto", "Uniform"), ("Gamma", "Pareto"),
         ("Chi2", "Gamma"), ("Chi2", "Normal"), ("Pareto", "Chi2")]


def _pair(torch, name, params):
    mine_params, their_params = leaves(torch, params)
    return (getattr(D, name)(**mine_params), getattr(torch.distributions, name)(**their_params),
            mine_params, their_params)


@pytest.mark.parametrize("pair", [(name, name) for name in SAME_FAMILY] + CROSS, ids="-".join)
def test_kl_matches_pytorch_with_gradients_to_both(pair):
    torch = torch_or_skip()
    name_p, name_q = pair
    p, tp, p_params, tp_params = _pair(torch, name_p, PARAMS[name_p])
    q, tq, q_params, tq_params = _pair(torch, name_q, OTHER[name_q])
    kl, t_kl = D.kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq)
    np.testing.assert_allclose(kl.detach().numpy(), t_kl.detach().numpy(), rtol=1e-10, atol=1e-12)
    finite = np.isfinite(t_kl.detach().numpy())
    if finite.any() and t_kl.requires_grad:
        kl[genesis.tensor(finite)].sum().backward()
        t_kl[torch.tensor(finite)].sum().backward()
        for mine_params, their_params in ((p_params, tp_params), (q_params, tq_params)):
            for key, leaf in their_params.items():
                if getattr(leaf, "grad", None) is not None:
                    np.testing.assert_allclose(mine_params[key].grad.numpy(), leaf.grad.numpy(),
                                               rtol=1e-9, atol=1e-12, err_msg=f"{pair} d/d{key}")


def test_kl_is_infinite_where_q_has_no_mass_as_in_pytorch():
    torch = torch_or_skip()
    cases = [("Bernoulli", dict(probs=[0.3, 0.0, 1.0]), dict(probs=[0.0, 0.5, 1.0])),
             ("Categorical", dict(probs=[[0.5, 0.5, 0.0]]), dict(probs=[[0.0, 0.5, 0.5]])),
             ("Uniform", dict(low=[0.0, 0.0], high=[1.0, 1.0]), dict(low=[0.5, -1.0], high=[2.0, 2.0])),
             ("Binomial", dict(total_count=[6.0, 5.0], probs=[0.3, 0.3]), dict(total_count=[5.0, 5.0], probs=[0.4, 0.4]))]
    for name, p_params, q_params in cases:
        p = getattr(D, name)(**{k: genesis.tensor(v, dtype=genesis.float64) for k, v in p_params.items()})
        q = getattr(D, name)(**{k: genesis.tensor(v, dtype=genesis.float64) for k, v in q_params.items()})
        tp = getattr(torch.distributions, name)(**{k: torch.tensor(v, dtype=torch.float64) for k, v in p_params.items()})
        tq = getattr(torch.distributions, name)(**{k: torch.tensor(v, dtype=torch.float64) for k, v in q_params.items()})
        np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), torch.distributions.kl_divergence(tp, tq).numpy(),
                                   rtol=1e-12, err_msg=name)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(2, probs=genesis.tensor([0.5])), D.Binomial(3, probs=genesis.tensor([0.5])))


def test_multivariate_normal_and_transformed_kl_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    factors = [rng.normal(size=(2, 3, 3)) for _ in range(2)]
    covariances = [f @ f.transpose(0, 2, 1) + np.eye(3) for f in factors]
    locs = [rng.normal(size=(2, 3)), rng.normal(size=3)]
    g = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in locs + covariances]
    t = [torch.tensor(a, requires_grad=True) for a in locs + covariances]
    kl = D.kl_divergence(D.MultivariateNormal(g[0], covariance_matrix=g[2]), D.MultivariateNormal(g[1], covariance_matrix=g[3]))
    t_kl = torch.distributions.kl_divergence(torch.distributions.MultivariateNormal(t[0], covariance_matrix=t[2]),
                                             torch.distributions.MultivariateNormal(t[1], covariance_matrix=t[3]))
    np.testing.assert_allclose(kl.detach().numpy(), t_kl.detach().numpy(), rtol=1e-10)
    kl.sum().backward()
    t_kl.sum().backward()
    for mine, theirs in zip(g, t):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-8, atol=1e-12)
    p, tp, *_ = _pair(torch, "LogNormal", PARAMS["LogNormal"])
    q, tq, *_ = _pair(torch, "LogNormal", OTHER["LogNormal"])
    np.testing.assert_allclose(D.kl_divergence(p, q).detach().numpy(),
                               torch.distributions.kl_divergence(tp, tq).detach().numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, D.TransformedDistribution(D.Normal(0.0, 1.0), D.transforms.TanhTransform()))


def test_dispatch_picks_the_most_specific_registered_pair():
    class Wide(D.Normal):
        pass

    with pytest.raises(NotImplementedError, match="No KL.*Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(logits=genesis.zeros(2)))
    inherited = D.kl_divergence(Wide(0.0, 1.0), D.Normal(1.0, 1.0))
    assert inherited.item() == pytest.approx(0.5)        # the Normal pair, through the subclass

    @D.register_kl(Wide, D.Normal)
    def _wide_normal(p, q):
        return p.loc * 0 - 1

    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(1.0, 1.0)).item() == -1.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), Wide(1.0, 1.0)).item() == pytest.approx(0.5)
    with pytest.raises(TypeError):
        D.register_kl(Wide(0.0, 1.0), D.Normal)


def test_gradcheck_of_kl_pairs():
    a = genesis.tensor([0.4, 3.0], dtype=genesis.float64, requires_grad=True)
    b = genesis.tensor([0.5, 1.5], dtype=genesis.float64, requires_grad=True)
    assert gradcheck(lambda a, b: D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Beta(a, b), D.Beta(b, a)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Laplace(a, b), D.Normal(b, a)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Normal(a, b), D.Laplace(b, a)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Pareto(a, b + 2), D.Pareto(a / 2, b)), (a, b))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Pareto(a, b + 2), D.Normal(b, a)), (a, b))


def _mixture_pair(torch, weights, locs, scales, event=False):
    mine, theirs = leaves(torch, dict(weights=weights, locs=locs, scales=scales))
    made = []
    for lib, p in ((D, mine), (torch.distributions, theirs)):
        component = lib.Normal(p["locs"], p["scales"])
        if event:
            component = lib.Independent(component, 1)
        made.append(lib.MixtureSameFamily(lib.Categorical(logits=p["weights"]), component))
    return made[0], made[1], mine, theirs


def test_mixture_same_family_matches_pytorch_with_gradients():
    torch = torch_or_skip()
    weights = [[0.2, -1.0, 0.5], [1.0, 0.0, 0.3]]
    locs, scales = [[-1.0, 0.5, 2.0], [0.0, 3.0, -2.0]], [[0.5, 1.0, 0.7], [2.0, 0.4, 1.1]]
    mine, theirs, g, t = _mixture_pair(torch, weights, locs, scales)
    value = [[0.3], [-1.5]]
    g_value, t_value = genesis.tensor(value, dtype=genesis.float64), torch.tensor(value, dtype=torch.float64)
    results = [(mine.log_prob(g_value), theirs.log_prob(t_value)), (mine.cdf(g_value), theirs.cdf(t_value)),
               (mine.mean, theirs.mean), (mine.variance, theirs.variance)]
    total, t_total = 0, 0
    for got, expected in results:
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
        total, t_total = total + got.sum(), t_total + expected.sum()
    total.backward()
    t_total.backward()
    for key in g:
        np.testing.assert_allclose(g[key].grad.numpy(), t[key].grad.numpy(), rtol=1e-10, err_msg=key)
    assert mine.batch_shape == (2,) and mine.event_shape == () and not mine.has_rsample
    vector, t_vector, *_ = _mixture_pair(torch, [0.0, 1.0], [[0.0, 1.0], [2.0, -1.0]], [[1.0, 0.5], [0.3, 2.0]], event=True)
    point = [[0.5, 0.5], [2.0, -1.0]]
    np.testing.assert_allclose(vector.log_prob(genesis.tensor(point, dtype=genesis.float64)).detach().numpy(),
                               t_vector.log_prob(torch.tensor(point, dtype=torch.float64)).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(vector.variance.detach().numpy(), t_vector.variance.detach().numpy(), rtol=1e-12)
    assert vector.event_shape == (2,) and vector.batch_shape == ()


def test_mixture_errors_sampling_and_shapes():
    with pytest.raises(ValueError, match="needs to be an instance of"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(genesis.zeros(2), 1.0))
    with pytest.raises(ValueError, match="need to be an instance of"):
        D.MixtureSameFamily(D.Categorical(logits=genesis.zeros(2)), "normal")
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(logits=genesis.zeros(3)), D.Normal(genesis.zeros(2), 1.0))
    with pytest.raises(ValueError, match="not compatible"):
        D.MixtureSameFamily(D.Categorical(logits=genesis.zeros(4, 2)), D.Normal(genesis.zeros(3, 2), 1.0))
    genesis.manual_seed(13)
    mix = D.MixtureSameFamily(D.Categorical(probs=genesis.tensor([0.3, 0.7], dtype=genesis.float64)),
                              D.Normal(genesis.tensor([-2.0, 1.0], dtype=genesis.float64),
                                       genesis.tensor([0.5, 1.0], dtype=genesis.float64)))
    draws = mix.sample((40000,))
    assert tuple(draws.shape) == (40000,)
    assert_moments(draws.numpy(), mix.mean.item(), mix.variance.item())
    batched = D.MixtureSameFamily(D.Categorical(logits=genesis.zeros(4, 3)),
                                  D.Independent(D.Normal(genesis.zeros(4, 3, 2), 1.0), 1))
    assert tuple(batched.sample((5,)).shape) == (5, 4, 2)
    expanded = D.MixtureSameFamily(D.Categorical(logits=genesis.zeros(3)), D.Normal(genesis.zeros(3), 1.0)).expand((6,))
    assert expanded.batch_shape == (6,) and tuple(expanded.sample((2,)).shape) == (2, 6)
    assert tuple(expanded.log_prob(genesis.zeros(6)).shape) == (6,)


def _mdn_loss(lib, weight, inputs, targets, components=3):
    """A mixture density network's negative log-likelihood, plus a KL regulariser to a prior."""
    out = inputs @ weight
    logits, locs, log_scales = out[:, :components], out[:, components:2 * components], out[:, 2 * components:]
    dist = lib.distributions
    mixture = dist.MixtureSameFamily(dist.Categorical(logits=logits), dist.Normal(locs, log_scales.exp()))
    prior = dist.Normal(lib.zeros_like(locs), lib.ones_like(locs))
    kl = dist.kl_divergence(dist.Normal(locs, log_scales.exp()), prior).mean()
    return -mixture.log_prob(targets).mean() + 0.1 * kl


def test_mixture_density_network_loss_matches_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    weight, inputs, targets = rng.normal(size=(4, 9)) * 0.4, rng.normal(size=(16, 4)), rng.normal(size=16)
    mine = genesis.tensor(weight, dtype=genesis.float64, requires_grad=True)
    theirs = torch.tensor(weight, requires_grad=True)
    loss = _mdn_loss(genesis, mine, genesis.tensor(inputs, dtype=genesis.float64), genesis.tensor(targets, dtype=genesis.float64))
    t_loss = _mdn_loss(torch, theirs, torch.tensor(inputs), torch.tensor(targets))
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
