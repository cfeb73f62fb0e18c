"""genesis.distributions.transforms and TransformedDistribution against PyTorch: forward,
inverse and log-det-Jacobian values with gradients, the cache_size=1 semantics, shapes, cdf
through decreasing maps, and a SAC actor loss with a tanh-squashed Gaussian."""
import math

import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from genesis.distributions import transforms as T
from tests.helpers import torch_or_skip

X = [-3.0, -0.4, 0.0, 0.7, 2.5]


def _simple_pairs(torch):
    TT = torch.distributions.transforms
    return [(T.ExpTransform(), TT.ExpTransform()),
            (T.SigmoidTransform(), TT.SigmoidTransform()),
            (T.TanhTransform(), TT.TanhTransform()),
            (T.SoftplusTransform(), TT.SoftplusTransform()),
            (T.AffineTransform(1.5, -2.0), TT.AffineTransform(1.5, -2.0)),
            (T.AffineTransform(genesis.tensor([0.5], dtype=genesis.float64), genesis.tensor([3.0, -0.5, 2.0, 1.0, 0.1], dtype=genesis.float64)),
             TT.AffineTransform(torch.tensor([0.5], dtype=torch.float64), torch.tensor([3.0, -0.5, 2.0, 1.0, 0.1], dtype=torch.float64)))]


def test_each_transform_matches_pytorch_forward_inverse_and_log_det_with_gradients():
    torch = torch_or_skip()
    for mine, theirs in _simple_pairs(torch):
        x = genesis.tensor(X, dtype=genesis.float64, requires_grad=True)
        tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        y, ty = mine(x), theirs(tx)
        back, tback = mine.inv(y.detach()), theirs.inv(ty.detach())
        ladj, tladj = mine.log_abs_det_jacobian(x, y), theirs.log_abs_det_jacobian(tx, ty)
        for got, expected in ((y, ty), (back, tback), (ladj, tladj)):
            np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                                       atol=1e-14, err_msg=repr(mine))
        (y.sum() + ladj.sum()).backward()
        (ty.sum() + tladj.sum()).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, err_msg=repr(mine))
        assert repr(mine.domain) == repr(theirs.domain) and repr(mine.codomain) == repr(theirs.codomain)
        assert mine.bijective == theirs.bijective and mine.inv.inv is mine


def test_softmax_and_compose_with_event_dims_match_pytorch():
    torch = torch_or_skip()
    TT = torch.distributions.transforms
    rows = [[0.2, -1.0, 3.0], [0.0, 0.5, -0.5]]
    x, tx = genesis.tensor(rows, dtype=genesis.float64), torch.tensor(rows, dtype=torch.float64)
    np.testing.assert_allclose(T.SoftmaxTransform()(x).numpy(), TT.SoftmaxTransform()(tx).numpy(), rtol=1e-14)
    scale = [2.0, -0.5, 1.5]
    mine = T.ComposeTransform([T.AffineTransform(0.0, genesis.tensor(scale, dtype=genesis.float64), event_dim=1),
                               T.ExpTransform()])
    theirs = TT.ComposeTransform([TT.AffineTransform(0.0, torch.tensor(scale, dtype=torch.float64), event_dim=1),
                                  TT.ExpTransform()])
    assert mine.domain.event_dim == theirs.domain.event_dim == 1
    assert mine.codomain.event_dim == theirs.codomain.event_dim == 1
    y, ty = mine(x), theirs(tx)
    np.testing.assert_allclose(mine.log_abs_det_jacobian(x, y).numpy(),
                               theirs.log_abs_det_jacobian(tx, ty).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.inv(y).numpy(), rows, rtol=1e-12)
    assert mine.inv.inv is mine and mine.sign.tolist() == theirs.sign.tolist()
    assert T.ComposeTransform([T.ExpTransform()]) == T.ComposeTransform([T.ExpTransform()])
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.identity_transform(x) is x


def test_cache_size_one_returns_the_cached_input_for_the_same_output_object():
    big = genesis.tensor([30.0], dtype=genesis.float64)
    cached, plain = T.TanhTransform(cache_size=1), T.TanhTransform()
    y = cached(big)
    assert y.item() == 1.0 and cached.inv(y) is big      # atanh(1) would be inf
    assert math.isinf(plain.inv(plain(big)).item())
    assert cached.inv(y.clone()).item() == math.inf      # another object is not the cached one
    assert cached(big) is cached(big)
    assert plain.with_cache(1)._cache_size == 1 and plain.with_cache(0) is plain
    assert T.AffineTransform(0.0, 2.0).with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match="Transform or a list of Transforms"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [lambda x: x])
    with pytest.raises(ValueError, match="Transform or list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), (T.ExpTransform(),))


def _sac_pair(torch, mu, sd, cache_size=1):
    g = [genesis.tensor(v, dtype=genesis.float64, requires_grad=True) for v in (mu, sd)]
    t = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (mu, sd)]
    mine = D.TransformedDistribution(D.Normal(*g), [T.TanhTransform(cache_size=cache_size)])
    theirs = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(*t), [torch.distributions.transforms.TanhTransform(cache_size=cache_size)])
    return g, t, mine, theirs


def test_tanh_squashed_normal_rsample_then_log_prob_matches_pytorch_with_the_same_noise():
    torch = torch_or_skip()
    mu, sd = [[0.3, -2.0, 25.0], [0.0, 1.0, -9.0]], [[0.5, 1.2, 0.1], [2.0, 0.3, 0.7]]
    g, t, mine, theirs = _sac_pair(torch, mu, sd)
    genesis.manual_seed(3)
    noise = D.Normal(genesis.zeros(4, 2, 3, dtype=genesis.float64), 1.0).sample()
    genesis.manual_seed(3)
    action = mine.rsample((4,))
    t_action = theirs.transforms[0](t[0] + t[1] * torch.tensor(noise.numpy()))
    assert tuple(action.shape) == (4, 2, 3) and mine.batch_shape == (2, 3) and mine.event_shape == ()
    log_prob, t_log_prob = mine.log_prob(action), theirs.log_prob(t_action)
    assert np.isfinite(log_prob.detach().numpy()).all()   # the cache keeps saturated actions finite
    np.testing.assert_allclose(action.detach().numpy(), t_action.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(log_prob.detach().numpy(), t_log_prob.detach().numpy(), rtol=1e-12)
    (log_prob.sum() + (action ** 2).sum()).backward()
    (t_log_prob.sum() + (t_action ** 2).sum()).backward()
    for mine_leaf, their_leaf in zip(g, t):
        np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-10)


def test_transformed_distribution_log_prob_cdf_icdf_and_shapes_match_pytorch():
    torch = torch_or_skip()
    TT = torch.distributions.transforms
    loc, scale = [0.2, -1.0], [0.7, 1.3]
    g_params = [genesis.tensor(v, dtype=genesis.float64, requires_grad=True) for v in (loc, scale)]
    t_params = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (loc, scale)]
    mine = D.TransformedDistribution(D.Normal(*g_params), [T.AffineTransform(1.0, -2.0), T.ExpTransform().inv.inv])
    theirs = torch.distributions.TransformedDistribution(torch.distributions.Normal(*t_params),
                                                         [TT.AffineTransform(1.0, -2.0), TT.ExpTransform()])
    value = [[0.5, 2.0], [0.01, 7.0]]
    g_value, t_value = genesis.tensor(value, dtype=genesis.float64), torch.tensor(value, dtype=torch.float64)
    total = mine.log_prob(g_value).sum() + mine.cdf(g_value).sum() + mine.icdf(g_value * 0.1).sum()
    t_total = theirs.log_prob(t_value).sum() + theirs.cdf(t_value).sum() + theirs.icdf(t_value * 0.1).sum()
    assert total.item() == pytest.approx(t_total.item(), rel=1e-12)
    total.backward()
    t_total.backward()
    for mine_leaf, their_leaf in zip(g_params, t_params):
        np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-10)
    assert repr(mine.support) == repr(theirs.support) and mine.has_rsample
    expanded = mine.expand((3, 2))
    assert expanded.batch_shape == (3, 2) and tuple(expanded.sample((5,)).shape) == (5, 3, 2)
    with pytest.raises(ValueError, match="within the support"):
        mine.log_prob(genesis.tensor([-1.0, 1.0], dtype=genesis.float64))
    vector = D.TransformedDistribution(D.Normal(genesis.zeros(4, 3), 1.0), T.SoftmaxTransform())
    assert vector.batch_shape == (4,) and vector.event_shape == (3,)


def test_gradcheck_of_the_squashed_policy_log_prob_and_rsample():
    mu = genesis.tensor([0.3, -1.0], dtype=genesis.float64, requires_grad=True)
    sd = genesis.tensor([0.6, 1.4], dtype=genesis.float64, requires_grad=True)

    def squashed(mu, sd):
        return D.TransformedDistribution(D.Normal(mu, sd), [T.TanhTransform(cache_size=1)])

    def sampled(mu, sd):
        genesis.manual_seed(11)
        return squashed(mu, sd).rsample((3,))

    def log_prob_of_a_fixed_action(mu, sd):
        return squashed(mu, sd).log_prob(genesis.tensor([0.5, -0.9], dtype=genesis.float64))

    def log_prob_of_its_own_sample(mu, sd):
        genesis.manual_seed(12)
        policy = squashed(mu, sd)
        return policy.log_prob(policy.rsample((3,)))

    for function in (sampled, log_prob_of_a_fixed_action, log_prob_of_its_own_sample):
        assert gradcheck(function, (mu, sd))


def _actor_loss(lib, layer_weight, layer_bias, obs, noise, q_weight, alpha=0.2):
    """A SAC actor step: obs -> (mu, log_std) -> tanh-squashed action; loss = α log π - Q."""
    out = obs @ layer_weight.T + layer_bias
    mu, log_std = out[:, :2], out[:, 2:].clamp(-5, 2)
    std = log_std.exp()
    policy = lib.distributions.TransformedDistribution(
        lib.distributions.Normal(mu, std), [lib.distributions.transforms.TanhTransform(cache_size=1)])
    pre_tanh = mu + std * noise
    action = policy.transforms[0](pre_tanh)
    log_pi = policy.log_prob(action).sum(-1)
    q_value = (action @ q_weight).squeeze(-1)
    return (alpha * log_pi - q_value).mean()


def test_sac_actor_loss_matches_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(8, 3)) * 3,
              rng.normal(size=(8, 2)), rng.normal(size=(2, 1))]
    mine = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    loss = _actor_loss(genesis, mine[0], mine[1], mine[2], mine[3], mine[4])
    t_loss = _actor_loss(torch, theirs[0], theirs[1], theirs[2], theirs[3], theirs[4])
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    for mine_leaf, their_leaf in zip(mine, theirs):
        np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_stick_breaking_power_abs_and_independent_transforms_match_pytorch():
    torch = torch_or_skip()
    TT = torch.distributions.transforms
    rows = [[0.3, -1.2, 2.0], [0.0, 0.5, -0.5]]
    scale = [2.0, -1.0, 0.5]
    cases = [
        (T.StickBreakingTransform(), TT.StickBreakingTransform(), rows),
        (T.PowerTransform(genesis.tensor(2.5, dtype=genesis.float64)), TT.PowerTransform(torch.tensor(2.5, dtype=torch.float64)),
         [[0.3, 1.2, 2.0]]),
        (T.IndependentTransform(T.AffineTransform(1.0, genesis.tensor(scale, dtype=genesis.float64)), 1),
         TT.IndependentTransform(TT.AffineTransform(1.0, torch.tensor(scale, dtype=torch.float64)), 1), rows),
    ]
    for mine, theirs, value in cases:
        x = genesis.tensor(value, dtype=genesis.float64, requires_grad=True)
        tx = torch.tensor(value, dtype=torch.float64, requires_grad=True)
        y, ty = mine(x), theirs(tx)
        ladj, tladj = mine.log_abs_det_jacobian(x, y), theirs.log_abs_det_jacobian(tx, ty)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, err_msg=repr(mine))
        np.testing.assert_allclose(ladj.detach().numpy(), tladj.detach().numpy(), rtol=1e-12, err_msg=repr(mine))
        np.testing.assert_allclose(mine.inv(y.detach()).numpy(), value, rtol=1e-10, atol=1e-12, err_msg=repr(mine))
        (y.sum() + ladj.sum()).backward()
        (ty.sum() + tladj.sum()).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=repr(mine))
        assert repr(mine.domain) == repr(theirs.domain) and repr(mine.codomain) == repr(theirs.codomain)
        assert tuple(mine.forward_shape((2, 3))) == tuple(theirs.forward_shape((2, 3)))
        forward = tuple(theirs.forward_shape((2, 3)))
        assert tuple(mine.inverse_shape(forward)) == tuple(theirs.inverse_shape(forward)) == (2, 3)
    assert T.AbsTransform()(genesis.tensor([-2.0])).tolist() == [2.0] and not T.AbsTransform().bijective
    logistic_normal = D.TransformedDistribution(D.Normal(genesis.zeros(4, 2, dtype=genesis.float64), 1.0),
                                                T.StickBreakingTransform())
    t_logistic_normal = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.zeros(4, 2, dtype=torch.float64), 1.0), TT.StickBreakingTransform())
    assert logistic_normal.batch_shape == (4,) and logistic_normal.event_shape == (3,)
    point = [[0.2, 0.3, 0.5]] * 4
    np.testing.assert_allclose(logistic_normal.log_prob(genesis.tensor(point, dtype=genesis.float64)).numpy(),
                               t_logistic_normal.log_prob(torch.tensor(point, dtype=torch.float64)).numpy(), rtol=1e-12)
