"""Chi2, Weibull and Pareto against torch.distributions (values and parameter gradients of
every method, with broadcast parameters, in float64), PyTorch's exceptions, gradcheck of
log_prob (and of rsample where the draw is a smooth function of the parameters), rsample
gradients on the same noise, sample statistics and shapes, expand, and `--torch` serving."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import check_against_torch, run_served_and_real
from tests.helpers import torch_or_skip

POSITIVE_VALUE = [[0.1, 2.0, 3.5], [1.0, 0.4, 0.7]]
PROBABILITY = [[0.1, 0.5, 0.93], [0.02, 0.6, 0.7]]
CASES = {
    # df below 2 (mode clamped to 0), at 2 and above
    "Chi2": (dict(df=[[0.7, 2.0, 5.5], [1.5, 3.0, 9.0]]), POSITIVE_VALUE),
    # concentration below 1 (mode nan, as PyTorch's), and above; scale (2, 1) broadcast
    "Weibull": (dict(scale=[[0.5], [2.0]], concentration=[0.7, 1.5, 3.0]), POSITIVE_VALUE),
    # alpha below 1 (infinite mean), between 1 and 2 (infinite variance) and above 2
    "Pareto": (dict(scale=[[0.05], [0.3]], alpha=[0.7, 1.5, 3.0]), POSITIVE_VALUE),
}
METHODS = {"Chi2": ("log_prob",), "Weibull": ("log_prob", "cdf", "icdf"),
           "Pareto": ("log_prob", "cdf", "icdf")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(name):
    torch = torch_or_skip()
    params, value = CASES[name]
    check_against_torch(torch, name, params, value, methods=METHODS[name],
                        value_for={"icdf": PROBABILITY})


def test_chi2_cdf_matches_pytorch_and_is_the_gamma_one():
    torch = torch_or_skip()
    df = CASES["Chi2"][0]["df"]
    mine = D.Chi2(genesis.tensor(df, dtype=genesis.float64))
    theirs = torch.distributions.Chi2(torch.tensor(df, dtype=torch.float64))
    value = genesis.tensor(POSITIVE_VALUE, dtype=genesis.float64)
    np.testing.assert_allclose(mine.cdf(value).numpy(),
                               theirs.cdf(torch.tensor(POSITIVE_VALUE, dtype=torch.float64)).numpy(),
                               rtol=1e-10)
    assert isinstance(mine, D.Gamma) and mine.rate.tolist() == [[0.5] * 3] * 2
    np.testing.assert_allclose(mine.concentration.numpy(), np.array(df) / 2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_arguments_and_values_raise_as_in_pytorch(name):
    torch = torch_or_skip()
    params, _ = CASES[name]
    for bad_key in params:
        bad = {key: 1.0 for key in params}
        bad[bad_key] = -1.0
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in bad.items()})
        with pytest.raises(ValueError, match="Expected parameter") as mine:
            getattr(D, name)(**{k: genesis.tensor(v) for k, v in bad.items()})
        assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
        quiet = getattr(D, name)(**{k: genesis.tensor(v) for k, v in bad.items()}, validate_args=False)
        assert quiet.batch_shape == ()
    good = getattr(D, name)(**{k: genesis.tensor(v) for k, v in params.items()})
    with pytest.raises(ValueError, match="must be a Tensor"):
        good.log_prob(0.5)
    with pytest.raises(ValueError, match="not broadcastable"):
        good.log_prob(genesis.ones(4))
    with pytest.raises(ValueError, match="within the support"):
        good.log_prob(-genesis.ones(3))


def test_pareto_support_starts_at_its_scale():
    torch = torch_or_skip()
    mine = D.Pareto(genesis.tensor([1.0, 2.0]), 3.0)
    theirs = torch.distributions.Pareto(torch.tensor([1.0, 2.0]), 3.0)
    value = [1.5, 1.5]
    assert mine.support.check(genesis.tensor(value)).tolist() == \
        theirs.support.check(torch.tensor(value)).tolist() == [True, False]
    with pytest.raises(ValueError, match="within the support"):
        mine.log_prob(genesis.tensor(value))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_of_log_prob_and_entropy(name):
    params, value = CASES[name]
    names = sorted(params)
    leaves = [genesis.tensor(params[key], dtype=genesis.float64, requires_grad=True) for key in names]
    point = genesis.tensor(value, dtype=genesis.float64)
    if name == "Pareto":   # the support starts at scale: keep the point above it
        point = point + 0.5
    assert gradcheck(lambda *p: getattr(D, name)(**dict(zip(names, p))).log_prob(point), leaves)
    assert gradcheck(lambda *p: getattr(D, name)(**dict(zip(names, p))).entropy(), leaves)


def _draws(name, params, seed, shape):
    genesis.manual_seed(seed)
    return getattr(D, name)(**params).rsample(shape)


@pytest.mark.parametrize("name", ["Weibull", "Pareto"])
def test_gradcheck_of_rsample(name):
    params, _ = CASES[name]
    names = sorted(params)
    leaves = [genesis.tensor(params[key], dtype=genesis.float64, requires_grad=True) for key in names]
    assert gradcheck(lambda *p: _draws(name, dict(zip(names, p)), 5, (4,)), leaves)


@pytest.mark.parametrize("name", ["Weibull", "Pareto"])
def test_rsample_gradients_match_pytorch_given_the_same_noise(name):
    """Both are an Exponential draw pushed through transforms: the same seed gives the standard
    exponential genesis uses, and PyTorch's transforms of it give the gradients to match."""
    torch = torch_or_skip()
    params, _ = CASES[name]
    leaves = {key: genesis.tensor(v, dtype=genesis.float64, requires_grad=True) for key, v in params.items()}
    theirs = {key: torch.tensor(v, dtype=torch.float64, requires_grad=True) for key, v in params.items()}
    batch = tuple(getattr(D, name)(**leaves).batch_shape)
    genesis.manual_seed(9)
    noise = torch.tensor(D.Exponential(genesis.ones(batch, dtype=genesis.float64)).rsample((5,)).numpy())
    drawn = _draws(name, leaves, 9, (5,))
    if name == "Weibull":
        expected = theirs["scale"] * noise.pow(theirs["concentration"].reciprocal())
    else:
        expected = theirs["scale"] * (noise / theirs["alpha"]).exp()
    np.testing.assert_allclose(drawn.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    weights = np.linspace(-1, 1, drawn.numel()).reshape(tuple(drawn.shape))
    (drawn * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for key in params:
        np.testing.assert_allclose(leaves[key].grad.numpy(), theirs[key].grad.numpy(), rtol=1e-10)


def test_chi2_rsample_is_the_gamma_one_with_its_gradient():
    df = genesis.tensor([0.7, 3.0, 9.0], dtype=genesis.float64, requires_grad=True)
    genesis.manual_seed(3)
    drawn = D.Chi2(df).rsample((6,))
    genesis.manual_seed(3)
    expected = D.Gamma(df / 2, 0.5).rsample((6,))
    np.testing.assert_array_equal(drawn.detach().numpy(), expected.detach().numpy())
    (grad,) = genesis.autograd.grad(drawn.sum(), df)
    (expected_grad,) = genesis.autograd.grad(expected.sum(), df)
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12)
    assert np.all(grad.numpy() > 0)   # a larger df moves every draw up


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(2024)
    n = 40000
    families = [D.Chi2(genesis.tensor([1.0, 4.0, 10.0], dtype=genesis.float64)),
                D.Weibull(genesis.tensor([0.5, 2.0, 1.0], dtype=genesis.float64),
                          genesis.tensor([0.8, 1.5, 3.0], dtype=genesis.float64)),
                D.Pareto(genesis.tensor([0.5, 2.0, 1.0], dtype=genesis.float64),
                         genesis.tensor([5.0, 6.0, 9.0], dtype=genesis.float64))]
    for dist in families:
        draws = dist.sample((n,))
        assert tuple(draws.shape) == (n, 3) and not draws.requires_grad
        assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
        assert bool(dist.support.check(draws).all().item())
        expanded = dist.expand((2, 3))
        assert type(expanded) is type(dist) and expanded.batch_shape == (2, 3)
        assert tuple(expanded.rsample((7,)).shape) == (7, 2, 3)
        assert tuple(expanded.log_prob(dist.mean.expand((2, 3))).shape) == (2, 3)
        np.testing.assert_allclose(expanded.mean.numpy(), np.broadcast_to(dist.mean.numpy(), (2, 3)))
        np.testing.assert_allclose(expanded.entropy().numpy(), np.broadcast_to(dist.entropy().numpy(), (2, 3)))
    assert D.Chi2(3.0).sample().dtype == genesis.float32 and D.Weibull(1.0, 2.0).sample((2,)).shape == (2,)
    assert D.Pareto(1.0, 2.0).has_rsample and D.Weibull(1.0, 2.0).has_rsample and D.Chi2(2.0).has_rsample


SERVED = """
import torch
from torch.distributions import Chi2, Weibull, Pareto
from torch.distributions.chi2 import Chi2 as Chi2Again
from torch.distributions.weibull import Weibull as WeibullAgain
from torch.distributions.pareto import Pareto as ParetoAgain

scale = torch.tensor([1.0, 2.0], requires_grad=True)
loss = -Weibull(scale, torch.tensor(1.5)).log_prob(torch.tensor([0.5, 3.0])).sum()
loss = loss - Pareto(scale, torch.tensor(3.0)).log_prob(torch.tensor([2.5, 3.0])).sum()
loss = loss - Chi2(scale * 2).log_prob(torch.tensor([1.0, 2.0])).sum()
loss.backward()
result = (loss.item(), scale.grad.tolist(), Chi2 is Chi2Again and Weibull is WeibullAgain and Pareto is ParetoAgain)
"""


def test_served_as_torch_distributions():
    torch_or_skip()
    (loss, gradient, same), (their_loss, their_gradient, _) = run_served_and_real(SERVED)
    assert same and isinstance(loss, float)
    assert loss == pytest.approx(their_loss, rel=1e-6)
    np.testing.assert_allclose(gradient, their_gradient, rtol=1e-5)
