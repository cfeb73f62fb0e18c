"""The relaxed (Concrete / Gumbel-softmax) distributions and OneHotCategoricalStraightThrough
against torch.distributions: log_prob with its gradients to the parameters and the
temperature, shapes, reparameterised samples inside the support, and the straight-through
gradient."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from tests.helpers import torch_or_skip

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("name, given", [("RelaxedBernoulli", "logits"), ("RelaxedBernoulli", "probs"),
                                         ("RelaxedOneHotCategorical", "logits"),
                                         ("RelaxedOneHotCategorical", "probs")])
def test_relaxed_distributions_match_pytorch_with_gradients(name, given):
    torch = torch_or_skip()
    categorical = name == "RelaxedOneHotCategorical"
    raw = (RNG.standard_normal((2, 3)) if given == "logits" else
           RNG.dirichlet(np.ones(3), size=2) if categorical else RNG.uniform(0.1, 0.9, (2, 3)))
    value = RNG.dirichlet(np.ones(3), size=(4, 2)) if categorical else RNG.uniform(0.05, 0.95, (4, 2, 3))
    results, leaves = [], []
    for lib, dists in ((genesis, D), (torch, torch.distributions)):
        param = lib.tensor(raw, dtype=lib.float64, requires_grad=True)
        temperature = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        dist = getattr(dists, name)(temperature, **{given: param})
        log_prob = dist.log_prob(lib.tensor(value, dtype=lib.float64))
        log_prob.sum().backward()
        results.append((log_prob, tuple(dist.batch_shape), tuple(dist.event_shape)))
        leaves.append((param, temperature))
    np.testing.assert_allclose(results[0][0].detach().numpy(), results[1][0].detach().numpy(), rtol=1e-10)
    assert results[0][1:] == results[1][1:]
    for mine, theirs in zip(*leaves):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)
    param = genesis.tensor(raw, dtype=genesis.float64, requires_grad=True)
    sample = getattr(D, name)(genesis.tensor(0.7, dtype=genesis.float64), **{given: param}).rsample((5,))
    assert tuple(sample.shape) == (5, 2, 3) and sample.requires_grad
    assert ((sample.detach().numpy() > 0) & (sample.detach().numpy() < 1)).all()
    sample.sum().backward()
    assert param.grad is not None


def test_one_hot_straight_through_passes_the_gradient_to_the_probabilities():
    torch = torch_or_skip()
    logits = RNG.standard_normal((2, 4))
    mine = D.OneHotCategoricalStraightThrough(logits=genesis.tensor(logits, dtype=genesis.float64))
    theirs = torch.distributions.OneHotCategoricalStraightThrough(logits=torch.tensor(logits))
    assert mine.has_rsample and theirs.has_rsample
    leaf = genesis.tensor(logits, dtype=genesis.float64, requires_grad=True)
    dist = D.OneHotCategoricalStraightThrough(logits=leaf)
    sample = dist.rsample((5,))
    assert tuple(sample.shape) == (5, 2, 4) and (sample.detach().numpy().sum(-1) == 1).all()
    weights = genesis.tensor(np.arange(4.0), dtype=genesis.float64)
    (sample * weights).sum().backward()
    probs = dist.probs.detach()
    expected = 5 * probs * (weights - (probs * weights).sum(-1, keepdim=True))
    np.testing.assert_allclose(leaf.grad.numpy(), expected.numpy(), rtol=1e-10)
