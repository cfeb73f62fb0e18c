"""NegativeBinomial against torch.distributions: values and parameter gradients (given probs
or logits, with broadcast parameters, in float64), PyTorch's exceptions (only the parameter
given is validated), gradcheck of log_prob, sample moments and shapes, expand, `--torch`."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import check_against_torch, run_served_and_real
from tests.helpers import torch_or_skip

COUNT = [[0.5], [2.5]]          # (2, 1) broadcast against the (3,) probabilities
VALUE = [[0.0, 1.0, 3.0], [2.0, 0.0, 7.0]]
PARAMETERS = {"probs": [0.1, 0.5, 0.9], "logits": [-1.0, 0.0, 3.0]}


@pytest.mark.parametrize("given", sorted(PARAMETERS))
def test_values_and_gradients_match_pytorch(given):
    torch = torch_or_skip()
    check_against_torch(torch, "NegativeBinomial", {"total_count": COUNT, given: PARAMETERS[given]},
                        VALUE, methods=("log_prob",), entropy=False)


def test_a_total_count_of_zero_is_a_point_mass_at_zero():
    torch = torch_or_skip()
    mine = D.NegativeBinomial(genesis.tensor([0.0, 0.0]), probs=genesis.tensor([0.3, 0.7]))
    theirs = torch.distributions.NegativeBinomial(torch.tensor([0.0, 0.0]), probs=torch.tensor([0.3, 0.7]))
    for value in ([0.0, 0.0], [1.0, 2.0]):
        assert mine.log_prob(genesis.tensor(value)).tolist() == theirs.log_prob(torch.tensor(value)).tolist()
    assert mine.sample((5,)).tolist() == [[0.0, 0.0]] * 5
    # d/dr log P(0) = d/dr r log(1 - p) = log(1 - p), also at r = 0 (where PyTorch's is nan,
    # from 0 · digamma(0) in its masked lgamma terms)
    count = genesis.tensor([0.0, 1.0], dtype=genesis.float64, requires_grad=True)
    D.NegativeBinomial(count, probs=genesis.tensor(0.3, dtype=genesis.float64)).log_prob(
        genesis.zeros(2, dtype=genesis.float64)).sum().backward()
    np.testing.assert_allclose(count.grad.numpy(), [np.log(0.7)] * 2, rtol=1e-14)


def test_invalid_arguments_and_values_raise_as_in_pytorch():
    torch = torch_or_skip()
    for bad in (dict(total_count=-1.0, probs=0.5), dict(total_count=1.0, probs=1.0),
                dict(total_count=1.0, probs=-0.1), dict(total_count=-1.0, logits=0.0)):
        with pytest.raises(ValueError) as theirs:
            torch.distributions.NegativeBinomial(**{k: torch.tensor(v) for k, v in bad.items()})
        with pytest.raises(ValueError, match="Expected parameter") as mine:
            D.NegativeBinomial(**{k: genesis.tensor(v) for k, v in bad.items()})
        assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
        D.NegativeBinomial(**{k: genesis.tensor(v) for k, v in bad.items()}, validate_args=False)
    # logits whose probs round to 1 are valid, as in PyTorch (which derives probs lazily)
    assert D.NegativeBinomial(1.0, logits=genesis.tensor(40.0)).probs.item() == 1.0
    for both in (dict(), dict(probs=genesis.tensor(0.5), logits=genesis.tensor(0.0))):
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            D.NegativeBinomial(1.0, **both)
    good = D.NegativeBinomial(genesis.tensor([1.0, 2.0]), probs=genesis.tensor(0.5))
    with pytest.raises(ValueError, match="must be a Tensor"):
        good.log_prob(1.0)
    with pytest.raises(ValueError, match="not broadcastable"):
        good.log_prob(genesis.ones(3))
    for outside in ([-1.0, 0.0], [0.5, 1.0]):
        with pytest.raises(ValueError, match="within the support"):
            good.log_prob(genesis.tensor(outside))


@pytest.mark.parametrize("given", sorted(PARAMETERS))
def test_gradcheck_of_log_prob(given):
    count = genesis.tensor(COUNT, dtype=genesis.float64, requires_grad=True)
    param = genesis.tensor(PARAMETERS[given], dtype=genesis.float64, requires_grad=True)
    value = genesis.tensor(VALUE, dtype=genesis.float64)
    assert gradcheck(lambda n, p: D.NegativeBinomial(n, **{given: p}).log_prob(value), [count, param])


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(11)
    n = 40000
    dist = D.NegativeBinomial(genesis.tensor([1.0, 3.5, 20.0], dtype=genesis.float64),
                              probs=genesis.tensor([0.3, 0.6, 0.1], dtype=genesis.float64))
    draws = dist.sample((n,))
    assert tuple(draws.shape) == (n, 3) and draws.dtype == genesis.float64 and not draws.requires_grad
    assert bool(dist.support.check(draws).all().item())
    assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
    expanded = D.NegativeBinomial(genesis.tensor(2.0), logits=genesis.tensor([0.0, 1.0])).expand((4, 2))
    assert type(expanded) is D.NegativeBinomial and expanded.batch_shape == (4, 2)
    assert tuple(expanded.sample((3,)).shape) == (3, 4, 2)
    assert tuple(expanded.probs.shape) == tuple(expanded.total_count.shape) == (4, 2)
    assert tuple(expanded.log_prob(genesis.ones(4, 2)).shape) == (4, 2)
    assert not D.NegativeBinomial(1.0, probs=genesis.tensor(0.5)).has_rsample


SERVED = """
import torch
from torch.distributions import NegativeBinomial
from torch.distributions.negative_binomial import NegativeBinomial as Again

log_count = torch.tensor([0.1, 1.0], requires_grad=True)
logits = torch.tensor([0.5, -0.5], requires_grad=True)
counts = torch.tensor([[0.0, 4.0], [3.0, 1.0]])
loss = -NegativeBinomial(log_count.exp(), logits=logits).log_prob(counts).sum()
loss.backward()
result = (loss.item(), log_count.grad.tolist() + logits.grad.tolist(), NegativeBinomial is Again)
"""


def test_served_as_torch_distributions():
    torch_or_skip()
    (loss, gradient, same), (their_loss, their_gradient, _) = run_served_and_real(SERVED)
    assert same
    assert loss == pytest.approx(their_loss, rel=1e-6)
    np.testing.assert_allclose(gradient, their_gradient, rtol=1e-5)
