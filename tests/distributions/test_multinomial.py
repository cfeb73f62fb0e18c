"""Multinomial against torch.distributions: values and parameter gradients (given probs or
logits, batched, in float64), its entropy (PyTorch's takes lgamma(n + 1) in float32),
PyTorch's exceptions, gradcheck of log_prob and entropy, sample moments and shapes, expand,
the multinomial constraint, and `--torch` serving."""
import math

import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import check_against_torch, run_served_and_real
from tests.helpers import torch_or_skip

PARAMETERS = {"probs": [[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], "logits": [[-1.0, 0.0, 3.0], [0.2, 0.1, -0.5]]}
COUNTS = [[0.0, 1.0, 4.0], [2.0, 3.0, 0.0]]


@pytest.mark.parametrize("given", sorted(PARAMETERS))
def test_values_and_gradients_match_pytorch(given):
    torch = torch_or_skip()
    mine, theirs = check_against_torch(torch, "Multinomial", {"total_count": 5, given: PARAMETERS[given]},
                                       COUNTS, methods=("log_prob",), properties=("mean", "variance", "stddev"),
                                       entropy=False)
    # PyTorch's lgamma(n + 1) is taken from torch.tensor(n), in float32: that is the only difference
    float32_error = float(np.float32(math.lgamma(6))) - math.lgamma(6)
    np.testing.assert_allclose(mine.entropy().detach().numpy(),
                               theirs.entropy().detach().numpy() + float32_error, rtol=1e-12)
    param = mine.probs if given == "probs" else mine.logits
    leaf = genesis.tensor(PARAMETERS[given], dtype=genesis.float64, requires_grad=True)
    their_leaf = torch.tensor(PARAMETERS[given], dtype=torch.float64, requires_grad=True)
    D.Multinomial(5, **{given: leaf}).entropy().sum().backward()
    torch.distributions.Multinomial(5, **{given: their_leaf}).entropy().sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-10)
    assert tuple(param.shape) == (2, 3)


def test_a_category_of_probability_zero_counted_zero_times_is_possible():
    torch = torch_or_skip()
    probs = [0.0, 0.25, 0.75]
    mine = D.Multinomial(4, probs=genesis.tensor(probs, dtype=genesis.float64))
    theirs = torch.distributions.Multinomial(4, probs=torch.tensor(probs, dtype=torch.float64))
    for counts in ([0.0, 1.0, 3.0], [1.0, 1.0, 2.0]):
        np.testing.assert_allclose(mine.log_prob(genesis.tensor(counts, dtype=genesis.float64)).item(),
                                   theirs.log_prob(torch.tensor(counts, dtype=torch.float64)).item(), rtol=1e-12)
    assert mine.sample((50,)).numpy()[:, 0].max() == 0


def test_invalid_arguments_and_values_raise_as_in_pytorch():
    torch = torch_or_skip()
    with pytest.raises(ValueError) as theirs:
        torch.distributions.Multinomial(3, probs=torch.tensor([-1.0, 2.0]))
    with pytest.raises(ValueError, match="Expected parameter probs") as mine:
        D.Multinomial(3, probs=genesis.tensor([-1.0, 2.0]))
    assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        D.Multinomial(genesis.tensor([3, 4]), probs=genesis.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Multinomial(3)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Multinomial(3, probs=genesis.tensor(1.0))
    good = D.Multinomial(3, probs=genesis.tensor([[0.5, 0.5], [0.2, 0.8]]))
    assert (good.batch_shape, good.event_shape) == ((2,), (2,))
    with pytest.raises(ValueError, match="must be a Tensor"):
        good.log_prob([1.0, 2.0])
    with pytest.raises(ValueError, match="right-most size"):
        good.log_prob(genesis.ones(3))
    for outside in ([-1.0, 2.0], [2.0, 2.0]):   # a negative count; more counts than trials
        with pytest.raises(ValueError, match="within the support"):
            good.log_prob(genesis.tensor(outside))
    assert repr(D.constraints.multinomial(3)) == repr(torch.distributions.constraints.multinomial(3))
    assert D.Multinomial(3, logits=genesis.zeros(2), validate_args=False).log_prob(
        genesis.tensor([5.0, 5.0])).item() == pytest.approx(math.log(252 / 1024))


@pytest.mark.parametrize("given", sorted(PARAMETERS))
def test_gradcheck_of_log_prob_and_entropy(given):
    leaf = genesis.tensor(PARAMETERS[given], dtype=genesis.float64, requires_grad=True)
    counts = genesis.tensor(COUNTS, dtype=genesis.float64)
    assert gradcheck(lambda p: D.Multinomial(5, **{given: p}).log_prob(counts), [leaf])
    assert gradcheck(lambda p: D.Multinomial(5, **{given: p}).entropy(), [leaf])


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(5)
    n = 20000
    dist = D.Multinomial(7, probs=genesis.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=genesis.float64))
    draws = dist.sample((n,))
    assert tuple(draws.shape) == (n, 2, 3) and draws.dtype == genesis.float64 and not draws.requires_grad
    assert draws.sum(-1).numpy().tolist() == [[7.0, 7.0]] * n
    assert bool(dist.support.check(draws).all().item())
    assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
    expanded = D.Multinomial(4, logits=genesis.tensor([0.0, 1.0, -1.0])).expand((5, 2))
    assert type(expanded) is D.Multinomial and (expanded.batch_shape, expanded.event_shape) == ((5, 2), (3,))
    assert tuple(expanded.sample((3,)).shape) == (3, 5, 2, 3)
    assert tuple(expanded.probs.shape) == (5, 2, 3) and tuple(expanded.entropy().shape) == (5, 2)
    assert tuple(expanded.log_prob(genesis.tensor([1.0, 1.0, 2.0])).shape) == (5, 2)
    assert not expanded.has_rsample and D.Multinomial(2, probs=genesis.ones(2)).sample().dtype == genesis.float32


SERVED = """
import torch
from torch.distributions import Multinomial
from torch.distributions.multinomial import Multinomial as Again

logits = torch.tensor([[0.5, -0.5, 0.0], [1.0, 0.0, 2.0]], requires_grad=True)
counts = torch.tensor([[3.0, 0.0, 2.0], [1.0, 1.0, 3.0]])
dist = Multinomial(5, logits=logits)
loss = -dist.log_prob(counts).sum() + dist.entropy().sum()
loss.backward()
result = (loss.item(), logits.grad.flatten().tolist(), Multinomial is Again)
"""


def test_served_as_torch_distributions():
    torch_or_skip()
    (loss, gradient, same), (their_loss, their_gradient, _) = run_served_and_real(SERVED)
    assert same
    assert loss == pytest.approx(their_loss, rel=1e-5)
    np.testing.assert_allclose(gradient, their_gradient, rtol=1e-4, atol=1e-6)
