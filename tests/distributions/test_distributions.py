"""genesis.distributions against torch.distributions: log_prob, entropy, cdf, moments and
kl_divergence values, gradients to the parameters, and samples with the right shapes and
statistics."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from tests.helpers import torch_or_skip


def pair(torch, values):
    return (genesis.tensor(values, dtype=genesis.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


def test_normal_and_uniform_match_pytorch_with_gradients():
    torch = torch_or_skip()
    loc, t_loc = pair(torch, [0.5, -1.0])
    scale, t_scale = pair(torch, [1.5, 0.3])
    value = [0.2, -0.7]
    mine, theirs = D.Normal(loc, scale), torch.distributions.Normal(t_loc, t_scale)
    for name in ("log_prob", "cdf"):
        np.testing.assert_allclose(getattr(mine, name)(genesis.tensor(value, dtype=genesis.float64)).detach().numpy(),
                                   getattr(theirs, name)(torch.tensor(value, dtype=torch.float64)).detach().numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(mine.entropy().detach().numpy(), theirs.entropy().detach().numpy(), rtol=1e-12)
    (mine.log_prob(genesis.tensor(value, dtype=genesis.float64)).sum() + mine.entropy().sum()).backward()
    (theirs.log_prob(torch.tensor(value, dtype=torch.float64)).sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(loc.grad.numpy(), t_loc.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(scale.grad.numpy(), t_scale.grad.numpy(), rtol=1e-12)
    low, high = genesis.tensor([0.0, 1.0]), genesis.tensor([2.0, 5.0])
    uniform, t_uniform = D.Uniform(low, high, validate_args=False), torch.distributions.Uniform(
        torch.tensor([0.0, 1.0]), torch.tensor([2.0, 5.0]), validate_args=False)
    probe = [1.0, 6.0]
    np.testing.assert_allclose(uniform.log_prob(genesis.tensor(probe)).numpy(),
                               t_uniform.log_prob(torch.tensor(probe)).numpy())
    np.testing.assert_allclose(uniform.entropy().numpy(), t_uniform.entropy().numpy(), rtol=1e-6)
    with pytest.raises(ValueError):  # checked by default, as in PyTorch
        torch.distributions.Uniform(torch.tensor([0.0]), torch.tensor([2.0])).log_prob(torch.tensor([3.0]))
    with pytest.raises(ValueError, match="to be within the support"):
        D.Uniform(genesis.tensor([0.0]), genesis.tensor([2.0])).log_prob(genesis.tensor([3.0]))
    with pytest.raises(ValueError, match="Expected parameter scale .* GreaterThan"):
        D.Normal(0.0, -1.0)


def test_rsample_carries_gradients_and_samples_have_the_right_statistics():
    genesis.manual_seed(0)
    loc = genesis.tensor([1.0], requires_grad=True)
    scale = genesis.tensor([2.0], requires_grad=True)
    draws = D.Normal(loc, scale).rsample((20000,))
    assert draws.shape == (20000, 1)
    assert abs(draws.mean().item() - 1.0) < 0.05 and abs(draws.std().item() - 2.0) < 0.05
    draws.mean().backward()
    assert loc.grad.item() == pytest.approx(1.0) and scale.grad is not None
    assert not D.Normal(loc, scale).sample((3,)).requires_grad


def test_bernoulli_and_categorical_match_pytorch():
    torch = torch_or_skip()
    logits = [[0.2, -1.0, 2.0], [1.5, 0.0, -0.3]]
    mine, theirs = D.Categorical(logits=genesis.tensor(logits, dtype=genesis.float64)), \
        torch.distributions.Categorical(logits=torch.tensor(logits, dtype=torch.float64))
    value = [2, 0]
    np.testing.assert_allclose(mine.log_prob(genesis.tensor(value)).numpy(),
                               theirs.log_prob(torch.tensor(value)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-12)
    probs = [0.2, 0.7]
    b, tb = D.Bernoulli(probs=genesis.tensor(probs, dtype=genesis.float64)), \
        torch.distributions.Bernoulli(probs=torch.tensor(probs, dtype=torch.float64))
    np.testing.assert_allclose(b.log_prob(genesis.tensor([1.0, 0.0], dtype=genesis.float64)).numpy(),
                               tb.log_prob(torch.tensor([1.0, 0.0], dtype=torch.float64)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.entropy().numpy(), tb.entropy().numpy(), rtol=1e-6)
    genesis.manual_seed(1)
    drawn = mine.sample((4000,))
    assert drawn.shape == (4000, 2) and drawn.dtype is genesis.int64
    frequency = (drawn[:, 0] == 2).float().mean().item()
    assert abs(frequency - float(theirs.probs[0, 2])) < 0.03


def test_kl_divergence_matches_pytorch():
    torch = torch_or_skip()
    cases = [
        (D.Normal(genesis.tensor([0.0, 1.0]), genesis.tensor([1.0, 2.0])), D.Normal(genesis.tensor([1.0, 0.0]), genesis.tensor([0.5, 1.0])),
         torch.distributions.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])),
         torch.distributions.Normal(torch.tensor([1.0, 0.0]), torch.tensor([0.5, 1.0]))),
        (D.Categorical(probs=genesis.tensor([0.2, 0.8])), D.Categorical(probs=genesis.tensor([0.5, 0.5])),
         torch.distributions.Categorical(probs=torch.tensor([0.2, 0.8])),
         torch.distributions.Categorical(probs=torch.tensor([0.5, 0.5]))),
        (D.Bernoulli(probs=genesis.tensor([0.3])), D.Bernoulli(probs=genesis.tensor([0.6])),
         torch.distributions.Bernoulli(probs=torch.tensor([0.3])),
         torch.distributions.Bernoulli(probs=torch.tensor([0.6]))),
    ]
    for p, q, tp, tq in cases:
        np.testing.assert_allclose(D.kl_divergence(p, q).numpy(),
                                   torch.distributions.kl_divergence(tp, tq).numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(probs=genesis.tensor([1.0])))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()


def test_independent_normal_matches_pytorch_with_gradients():
    """A diagonal Gaussian policy: Independent(Normal(mean, std), 1), its shapes, log_prob,
    entropy, moments and the KL between two of them, with gradients to mean and std."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    loc, t_loc = pair(torch, rng.standard_normal((4, 3)).tolist())
    scale, t_scale = pair(torch, rng.uniform(0.5, 2.0, (3,)).tolist())
    value = rng.standard_normal((5, 4, 3)).tolist()
    mine = D.Independent(D.Normal(loc, scale), 1)
    theirs = torch.distributions.Independent(torch.distributions.Normal(t_loc, t_scale), 1)
    assert (mine.batch_shape, mine.event_shape) == (tuple(theirs.batch_shape), tuple(theirs.event_shape)) \
        == ((4,), (3,))
    assert mine.has_rsample and tuple(mine.rsample((2,)).shape) == (2, 4, 3)
    log_prob = mine.log_prob(genesis.tensor(value, dtype=genesis.float64))
    t_log_prob = theirs.log_prob(torch.tensor(value, dtype=torch.float64))
    np.testing.assert_allclose(log_prob.detach().numpy(), t_log_prob.detach().numpy(), rtol=1e-12)
    for name in ("mean", "variance", "stddev"):
        np.testing.assert_allclose(getattr(mine, name).detach().numpy(),
                                   getattr(theirs, name).detach().numpy(), rtol=1e-12)
    other = D.Independent(D.Normal(loc.detach() + 1, scale.detach() * 2), 1)
    t_other = torch.distributions.Independent(torch.distributions.Normal(t_loc.detach() + 1, t_scale.detach() * 2), 1)
    kl, t_kl = D.kl_divergence(mine, other), torch.distributions.kl_divergence(theirs, t_other)
    assert kl.shape == (4,)
    np.testing.assert_allclose(kl.detach().numpy(), t_kl.detach().numpy(), rtol=1e-12)
    (log_prob.sum() + mine.entropy().sum() + kl.sum()).backward()
    (t_log_prob.sum() + theirs.entropy().sum() + t_kl.sum()).backward()
    np.testing.assert_allclose(loc.grad.numpy(), t_loc.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(scale.grad.numpy(), t_scale.grad.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError):  # as PyTorch: reinterpreted dims differ
        D.kl_divergence(mine, D.Independent(D.Normal(loc, scale), 2))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(loc, scale), 3)


@pytest.mark.parametrize("given", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_multivariate_normal_matches_pytorch_with_gradients(given):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    covariance = a @ a.T + np.eye(3)
    matrix = {"covariance_matrix": covariance, "scale_tril": np.linalg.cholesky(covariance),
              "precision_matrix": np.linalg.inv(covariance)}[given]
    loc, t_loc = pair(torch, rng.standard_normal((2, 3)).tolist())  # a batch of 2
    held, t_held = pair(torch, matrix.tolist())
    value = rng.standard_normal((4, 2, 3)).tolist()
    mine = D.MultivariateNormal(loc, **{given: held})
    theirs = torch.distributions.MultivariateNormal(t_loc, **{given: t_held})
    assert mine.batch_shape == tuple(theirs.batch_shape) == (2,)
    assert mine.event_shape == tuple(theirs.event_shape) == (3,)
    log_prob = mine.log_prob(genesis.tensor(value, dtype=genesis.float64))
    t_log_prob = theirs.log_prob(torch.tensor(value, dtype=torch.float64))
    np.testing.assert_allclose(log_prob.detach().numpy(), t_log_prob.detach().numpy(), rtol=1e-10)
    for name in ("entropy",):
        np.testing.assert_allclose(getattr(mine, name)().detach().numpy(),
                                   getattr(theirs, name)().detach().numpy(), rtol=1e-10)
    for name in ("variance", "covariance_matrix", "precision_matrix"):
        np.testing.assert_allclose(getattr(mine, name).detach().numpy(),
                                   getattr(theirs, name).detach().numpy(), rtol=1e-10, atol=1e-12)
    (log_prob.sum() + mine.entropy().sum()).backward()
    (t_log_prob.sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(loc.grad.numpy(), t_loc.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(held.grad.numpy(), t_held.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_multivariate_normal_samples_have_its_covariance_and_carry_gradients():
    genesis.manual_seed(0)
    loc = genesis.tensor([1.0, -1.0], requires_grad=True)
    covariance = genesis.tensor([[2.0, 0.5], [0.5, 1.0]])
    draws = D.MultivariateNormal(loc, covariance_matrix=covariance).rsample((20000,))
    assert draws.shape == (20000, 2)
    np.testing.assert_allclose(np.cov(draws.detach().numpy().T), covariance.numpy(), atol=0.06)
    draws.mean().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [0.5, 0.5], rtol=1e-3)  # a float32 sum of 20000
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(loc, covariance_matrix=covariance, scale_tril=covariance)


def test_the_first_families_match_pytorch_in_every_method_with_gradients():
    """mode, icdf, stddev and the rest that Normal, Uniform, Bernoulli and Categorical gained."""
    torch = torch_or_skip()
    from tests.distributions.torch_pairs import check_against_torch
    check_against_torch(torch, "Bernoulli", dict(probs=[0.2, 0.5, 0.9]), [1.0, 0.0, 1.0], methods=("log_prob",))
    check_against_torch(torch, "Bernoulli", dict(logits=[0.2, -3.0, 9.0]), [1.0, 0.0, 1.0], methods=("log_prob",))
    check_against_torch(torch, "Normal", dict(loc=[[0.2], [1.0]], scale=[0.5, 2.0]), [0.3, 0.1],
                        value_for={"icdf": [0.2, 0.9]})
    check_against_torch(torch, "Uniform", dict(low=[[0.2], [1.0]], high=[3.5, 2.0]), [1.3, 1.9],
                        value_for={"icdf": [0.2, 0.9]})
    check_against_torch(torch, "Categorical", dict(logits=[[0.2, -1.0, 3.0], [0.0, 0.0, 1.0]]), [0, 2],
                        methods=(), properties=("mean", "mode", "variance"))
