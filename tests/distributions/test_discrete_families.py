"""OneHotCategorical, Poisson, Geometric and Binomial against torch.distributions (values and
gradients of log_prob, entropy and moments, with broadcast parameters, in float64), PyTorch's
exceptions, gradcheck, sample statistics and shapes, and a small count-regression and
policy-gradient program run in both."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import as_numpy, check_against_torch
from tests.helpers import torch_or_skip

PROBS = [[0.2, 0.5, 0.9], [0.05, 0.7, 1.0]]
LOGITS = [[0.3, -2.0, 4.0], [0.0, 1.5, -0.5]]
COUNTS = [[0.0, 3.0, 1.0], [7.0, 2.0, 0.0]]
CASES = {
    "Poisson": dict(rate=[[0.5, 3.0, 12.0], [2.0, 0.1, 1.0]]),
    "Geometric/probs": dict(probs=PROBS),
    "Geometric/logits": dict(logits=LOGITS),
    "Binomial/probs": dict(total_count=[[8.0], [10.0]], probs=PROBS),
    "Binomial/logits": dict(total_count=[[8.0], [10.0]], logits=LOGITS),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_count_families_match_pytorch_with_gradients(case):
    torch = torch_or_skip()
    name = case.split("/")[0]
    check_against_torch(torch, name, CASES[case], COUNTS, methods=("log_prob",),
                        entropy=name == "Geometric")  # Binomial: inhomogeneous counts here


@pytest.mark.parametrize("given", ["probs", "logits"])
def test_one_hot_categorical_matches_pytorch_with_gradients(given):
    torch = torch_or_skip()
    weights = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]] if given == "probs" else [[0.2, -1.0, 2.0], [1.5, 0.0, -0.3]]
    value = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    mine, theirs = check_against_torch(torch, "OneHotCategorical", {given: weights}, value,
                                       methods=("log_prob",))
    np.testing.assert_array_equal(mine.enumerate_support().numpy(), theirs.enumerate_support().numpy())
    np.testing.assert_array_equal(mine.enumerate_support(False).numpy(),
                                  theirs.enumerate_support(False).numpy())
    assert mine.event_shape == (3,) and mine.batch_shape == (2,)


def test_enumerate_support_and_entropy_of_binomial_match_pytorch():
    torch = torch_or_skip()
    mine = D.Binomial(5, probs=genesis.tensor([0.3, 0.8], dtype=genesis.float64))
    theirs = torch.distributions.Binomial(5, probs=torch.tensor([0.3, 0.8], dtype=torch.float64))
    np.testing.assert_array_equal(mine.enumerate_support().numpy(), theirs.enumerate_support().numpy())
    np.testing.assert_allclose(mine.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-12)
    assert repr(mine.support) .startswith("IntegerInterval(lower_bound=0")
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        D.Binomial(genesis.tensor([2.0, 3.0]), probs=genesis.tensor([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError):
        D.Poisson(1.0).entropy()


def test_invalid_arguments_raise_as_in_pytorch():
    torch = torch_or_skip()
    cases = [("Poisson", dict(rate=[-1.0])), ("Geometric", dict(probs=[1.5])),
             ("Binomial", dict(total_count=[2.5], probs=[0.5])), ("Binomial", dict(total_count=[3.0], probs=[-0.1])),
             ("OneHotCategorical", dict(probs=[-0.5, 1.5]))]
    for name, params in cases:
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in params.items()})
        with pytest.raises(ValueError) as mine:
            getattr(D, name)(**{k: genesis.tensor(v) for k, v in params.items()})
        assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
    with pytest.raises(ValueError, match="to be positive"):
        D.Geometric(probs=genesis.tensor([0.0]))
    for name in ("Geometric", "Binomial", "OneHotCategorical"):
        with pytest.raises(ValueError, match="not both"):
            getattr(D, name)(probs=genesis.tensor([0.5]), logits=genesis.tensor([0.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Poisson(genesis.tensor([1.0])).log_prob(genesis.tensor([0.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.Binomial(3, probs=genesis.tensor([0.5])).log_prob(genesis.tensor([4.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.OneHotCategorical(probs=genesis.tensor([0.5, 0.5])).log_prob(genesis.tensor([1.0, 1.0]))
    assert D.Poisson(genesis.tensor([1.0]), validate_args=False).log_prob(genesis.tensor([0.5])).shape == (1,)


def test_gradcheck_of_log_prob_and_entropy():
    counts = genesis.tensor(COUNTS, dtype=genesis.float64)
    rate = genesis.tensor(CASES["Poisson"]["rate"], dtype=genesis.float64, requires_grad=True)
    probs = genesis.tensor([[0.2, 0.5, 0.9], [0.05, 0.7, 0.6]], dtype=genesis.float64, requires_grad=True)
    logits = genesis.tensor(LOGITS, dtype=genesis.float64, requires_grad=True)
    assert gradcheck(lambda r: D.Poisson(r).log_prob(counts), (rate,))
    assert gradcheck(lambda p: D.Geometric(probs=p).log_prob(counts) + D.Geometric(probs=p).entropy(), (probs,))
    assert gradcheck(lambda l: D.Binomial(10, logits=l).log_prob(counts) + D.Binomial(10, logits=l).entropy(),
                     (logits,))
    assert gradcheck(lambda l: D.OneHotCategorical(logits=l).entropy(), (logits,))


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(7)
    n = 40000
    for dist in (D.Poisson(genesis.tensor([0.5, 4.0, 30.0], dtype=genesis.float64)),
                 D.Geometric(probs=genesis.tensor([0.2, 0.5, 0.9], dtype=genesis.float64)),
                 D.Binomial(genesis.tensor([1.0, 10.0, 50.0], dtype=genesis.float64),
                            probs=genesis.tensor([0.3, 0.5, 0.95], dtype=genesis.float64)),
                 D.OneHotCategorical(probs=genesis.tensor([0.1, 0.6, 0.3], dtype=genesis.float64))):
        draws = dist.sample((n,))
        assert tuple(draws.shape) == (n, 3) and draws.dtype == genesis.float64
        assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
        assert bool(dist.support.check(draws).all().item())
    assert tuple(D.Poisson(genesis.ones(2, 3)).sample((4, 5)).shape) == (4, 5, 2, 3)
    one_hot = D.OneHotCategorical(logits=genesis.zeros(2, 4)).expand((3, 2))
    assert tuple(one_hot.sample((5,)).shape) == (5, 3, 2, 4) and one_hot.batch_shape == (3, 2)
    binomial = D.Binomial(3, probs=genesis.tensor([0.5])).expand((6,))
    assert tuple(binomial.sample().shape) == (6,) and tuple(binomial.log_prob(genesis.ones(6)).shape) == (6,)


def _count_and_policy_loss(lib, weight, obs, counts, actions, advantages, trials):
    """A Poisson and a Binomial GLM on the same features, a Geometric waiting-time model and a
    one-hot categorical policy-gradient term with an entropy bonus."""
    dist = lib.distributions
    features = obs @ weight
    loss = -dist.Poisson(features[:, 0].exp()).log_prob(counts).mean()
    loss = loss - dist.Binomial(trials, logits=features[:, 1]).log_prob(counts.clamp(max=trials)).mean()
    loss = loss - dist.Geometric(logits=features[:, 2]).log_prob(counts).mean()
    policy = dist.OneHotCategorical(logits=features)
    loss = loss - (policy.log_prob(actions) * advantages).mean() - 0.01 * policy.entropy().mean()
    return loss


def test_count_regression_and_policy_gradient_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(4, 3)) * 0.5
    obs = rng.normal(size=(12, 4))
    counts = rng.poisson(2.0, size=12).astype(float)
    actions = np.eye(3)[rng.integers(0, 3, size=12)]
    advantages = rng.normal(size=12)
    mine_weight = genesis.tensor(weight, dtype=genesis.float64, requires_grad=True)
    their_weight = torch.tensor(weight, dtype=torch.float64, requires_grad=True)
    data = (obs, counts, actions, advantages)
    loss = _count_and_policy_loss(genesis, mine_weight, *(genesis.tensor(a, dtype=genesis.float64) for a in data), 6.0)
    t_loss = _count_and_policy_loss(torch, their_weight, *(torch.tensor(a, dtype=torch.float64) for a in data), 6.0)
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(as_numpy(mine_weight.grad), as_numpy(their_weight.grad), rtol=1e-10)
