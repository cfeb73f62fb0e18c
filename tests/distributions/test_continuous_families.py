"""LogNormal, Laplace, Exponential, Cauchy, Gumbel, StudentT and HalfNormal against torch.distributions (values and
parameter gradients of every method, with broadcast parameters, in float64), PyTorch's
exceptions, gradcheck of log_prob and rsample, sample statistics and shapes, and a small
heavy-tailed regression fitted in both."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments, assert_quantile
from tests.distributions.torch_pairs import check_against_torch
from tests.helpers import torch_or_skip

LOC = [[0.3], [-1.2]]           # (2, 1) broadcast against SCALE's (3,)
SCALE = [0.5, 1.7, 2.5]
REAL_VALUE = [[0.1, -2.0, 3.5], [1.0, 0.0, -0.7]]
POSITIVE_VALUE = [[0.1, 2.0, 3.5], [1.0, 0.4, 0.7]]
PROBABILITY = [[0.1, 0.5, 0.93], [0.02, 0.6, 0.7]]

CASES = {
    "Laplace": (dict(loc=LOC, scale=SCALE), REAL_VALUE),
    "Cauchy": (dict(loc=LOC, scale=SCALE), REAL_VALUE),
    "Gumbel": (dict(loc=LOC, scale=SCALE), REAL_VALUE),
    "LogNormal": (dict(loc=LOC, scale=SCALE), POSITIVE_VALUE),
    "Exponential": (dict(rate=[[0.5, 1.5, 4.0], [2.0, 0.1, 1.0]]), POSITIVE_VALUE),
    # df below 1 (no mean), between 1 and 2 (infinite variance) and above 2
    "StudentT": (dict(df=[0.7, 1.5, 4.0], loc=LOC, scale=SCALE), REAL_VALUE),
    "HalfNormal": (dict(scale=SCALE), POSITIVE_VALUE),
}
HAS_ICDF = {"Laplace", "Cauchy", "Gumbel", "Exponential", "LogNormal", "HalfNormal"}
NO_CDF = {"StudentT"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(name):
    torch = torch_or_skip()
    params, value = CASES[name]
    methods = ("log_prob", "cdf", "icdf") if name in HAS_ICDF else ("log_prob", "cdf")
    methods = ("log_prob",) if name in NO_CDF else methods
    check_against_torch(torch, name, params, value, methods=methods,
                        value_for={"icdf": PROBABILITY})


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_arguments_and_values_raise_as_in_pytorch(name):
    torch = torch_or_skip()
    params, _ = CASES[name]
    bad = {key: -1.0 for key in params if key != "loc"}
    bad.update({key: 0.0 for key in params if key == "loc"})
    with pytest.raises(ValueError) as theirs:
        getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in bad.items()})
    with pytest.raises(ValueError, match="Expected parameter") as mine:
        getattr(D, name)(**{k: genesis.tensor(v) for k, v in bad.items()})
    assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
    good = getattr(D, name)(**{k: genesis.tensor(v) for k, v in params.items()})
    with pytest.raises(ValueError, match="must be a Tensor"):
        good.log_prob(0.5)
    with pytest.raises(ValueError, match="not broadcastable"):
        good.log_prob(genesis.ones(4))
    if name in ("Exponential", "LogNormal"):
        with pytest.raises(ValueError, match="within the support"):
            good.log_prob(-genesis.ones(3))
    quiet = getattr(D, name)(**{k: genesis.tensor(v) for k, v in bad.items()}, validate_args=False)
    assert quiet.batch_shape == ()


def _draws(name, params, seed, shape):
    genesis.manual_seed(seed)
    return getattr(D, name)(**params).rsample(shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_of_log_prob_and_rsample(name):
    params, value = CASES[name]
    names = sorted(params)
    leaves = [genesis.tensor(params[key], dtype=genesis.float64, requires_grad=True) for key in names]
    point = genesis.tensor(value, dtype=genesis.float64)
    assert gradcheck(lambda *p: getattr(D, name)(**dict(zip(names, p))).log_prob(point), leaves)
    if name == "StudentT":  # a gamma draw (the chi-squared) jumps as df moves: not df
        df, rest = leaves[names.index("df")].detach(), [k for k in names if k != "df"]
        leaves = [leaves[names.index(key)] for key in rest]
        assert gradcheck(lambda *p: _draws(name, dict(zip(rest, p), df=df), 5, (4,)), leaves)
        return
    assert gradcheck(lambda *p: _draws(name, dict(zip(names, p)), 5, (4,)), leaves)


STANDARD = {"Laplace": dict(loc=0.0, scale=1.0), "Cauchy": dict(loc=0.0, scale=1.0),
            "Gumbel": dict(loc=0.0, scale=1.0), "LogNormal": dict(loc=0.0, scale=1.0),
            "Exponential": dict(rate=1.0), "HalfNormal": dict(scale=1.0)}


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_rsample_gradients_match_pytorch_given_the_same_noise(name):
    """The same seed gives the standard draw (loc 0, scale 1, rate 1) genesis uses, and PyTorch's
    reparameterisation of that draw gives the gradients genesis's rsample must give."""
    torch = torch_or_skip()
    params, _ = CASES[name]
    leaves = {key: genesis.tensor(v, dtype=genesis.float64, requires_grad=True) for key, v in params.items()}
    their_leaves = {key: torch.tensor(v, dtype=torch.float64, requires_grad=True) for key, v in params.items()}
    batch = tuple(getattr(D, name)(**leaves).batch_shape)
    standard = {key: genesis.full(batch, value, dtype=genesis.float64) for key, value in STANDARD[name].items()}
    noise = torch.tensor(_draws(name, standard, 9, (5,)).numpy())
    drawn = _draws(name, leaves, 9, (5,))
    if name == "Exponential":
        expected = noise / their_leaves["rate"]
    elif name == "LogNormal":
        expected = (their_leaves["loc"] + their_leaves["scale"] * noise.log()).exp()
    elif name == "HalfNormal":
        expected = their_leaves["scale"] * noise
    else:
        expected = their_leaves["loc"] + their_leaves["scale"] * noise
    np.testing.assert_allclose(drawn.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    weights = np.linspace(-1, 1, drawn.numel()).reshape(tuple(drawn.shape))
    (drawn * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for key in params:
        np.testing.assert_allclose(leaves[key].grad.numpy(), their_leaves[key].grad.numpy(), rtol=1e-10)


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(2024)
    n = 40000
    for name in ("Laplace", "Gumbel", "LogNormal", "Exponential"):
        params = {"rate": [0.5, 3.0]} if name == "Exponential" else {"loc": [0.2, -1.0], "scale": [0.4, 0.9]}
        dist = getattr(D, name)(**{k: genesis.tensor(v, dtype=genesis.float64) for k, v in params.items()})
        draws = dist.sample((n,))
        assert tuple(draws.shape) == (n, 2) and not draws.requires_grad
        assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
    cauchy = D.Cauchy(genesis.tensor([1.0, -2.0]), genesis.tensor([0.5, 3.0]))
    draws = cauchy.sample((n,)).numpy()
    assert_quantile(draws, np.array([1.0, -2.0]), 0.5)
    assert_quantile(draws, np.array([1.5, 1.0]), 0.75)   # loc + scale is the upper quartile
    laplace = D.Laplace(genesis.zeros(2, 3), 1.0)
    assert tuple(laplace.sample((4, 5)).shape) == (4, 5, 2, 3) and laplace.sample().dtype == genesis.float32
    expanded = D.Gumbel(genesis.tensor([0.0, 1.0]), 2.0).expand((3, 2))
    assert expanded.batch_shape == (3, 2) and tuple(expanded.rsample((7,)).shape) == (7, 3, 2)
    assert tuple(expanded.log_prob(genesis.zeros(3, 2)).shape) == (3, 2)
    assert tuple(D.LogNormal(0.0, 1.0).expand((4,)).sample().shape) == (4,)


def _robust_fit_loss(lib, weight, bias, log_scale, inputs, targets):
    """Negative log-likelihood of a linear model under Laplace, Cauchy and Gumbel noise, and
    an Exponential/LogNormal model of positive targets."""
    prediction = inputs @ weight + bias
    scale = log_scale.exp()
    dist = lib.distributions
    loss = -dist.Laplace(prediction, scale).log_prob(targets).mean()
    loss = loss - dist.Cauchy(prediction, scale).log_prob(targets).mean()
    loss = loss - dist.Gumbel(prediction, scale).log_prob(targets).mean()
    positive = targets.abs() + 0.1
    loss = loss - dist.LogNormal(prediction, scale).log_prob(positive).mean()
    loss = loss - dist.Exponential(prediction.exp()).log_prob(positive).mean()
    return loss + dist.Laplace(prediction, scale).entropy().mean()


def test_a_heavy_tailed_regression_loss_matches_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=(3,)), np.array(0.1), np.array(-0.2)]
    inputs, targets = rng.normal(size=(16, 3)), rng.standard_cauchy(size=16)
    mine = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    loss = _robust_fit_loss(genesis, *mine, genesis.tensor(inputs, dtype=genesis.float64),
                            genesis.tensor(targets, dtype=genesis.float64))
    t_loss = _robust_fit_loss(torch, *theirs, torch.tensor(inputs), torch.tensor(targets))
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    for mine_leaf, their_leaf in zip(mine, theirs):
        np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-10)


def test_student_t_and_half_normal_samples_have_the_right_moments():
    genesis.manual_seed(7)
    n = 40000
    student = D.StudentT(genesis.tensor([5.0, 8.0], dtype=genesis.float64), genesis.tensor([0.5, -1.0]),
                         genesis.tensor([1.0, 2.0]))
    draws = student.rsample((n,))
    assert tuple(draws.shape) == (n, 2) and draws.dtype == genesis.float64
    assert_moments(draws.numpy(), student.mean.numpy(), student.variance.numpy())
    half = D.HalfNormal(genesis.tensor([0.5, 3.0], dtype=genesis.float64))
    draws = half.sample((n,)).numpy()
    assert (draws >= 0).all()
    assert_moments(draws, half.mean.numpy(), half.variance.numpy())
