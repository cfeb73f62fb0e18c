"""Gamma, Beta and Dirichlet: values and gradients of log_prob, entropy and moments against
torch.distributions (float64, broadcast parameters), PyTorch's exceptions, and the
reparameterised gradient of rsample.

The gradient of a Gamma or Dirichlet sample with respect to its concentration is the
implicit one, dx/da = -(dF/da)(x) / f(x). genesis computes it from series to about 1e-14 of
the exact value; PyTorch computes it with fitted approximations, about 1e-3 of it. So the
sample-gradient tests check genesis against the exact value (mpmath, or finite differences
of SciPy's cdfs) tightly, and against PyTorch's `_standard_gamma_grad`/`_dirichlet_grad` on
the very same sample values within PyTorch's approximation error."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from genesis.autograd.gradcheck import gradcheck
from genesis.distributions.implicit_gradients import beta_sample_derivative, gamma_sample_derivative
from tests.distributions.sampling_checks import assert_moments
from tests.distributions.torch_pairs import check_against_torch
from tests.helpers import torch_or_skip

TORCH_APPROXIMATION = 2e-3   # the relative error of PyTorch's fitted sample gradients

CONCENTRATION = [[0.4], [3.0]]         # (2, 1) against RATE's (3,)
RATE = [0.5, 1.0, 4.0]
POSITIVE_VALUE = [[0.1, 2.0, 3.5], [1.0, 0.4, 0.7]]
UNIT_VALUE = [[0.1, 0.5, 0.93], [0.02, 0.6, 0.7]]
SIMPLEX_VALUE = [[0.2, 0.3, 0.5], [0.05, 0.9, 0.05]]


def test_gamma_matches_pytorch_with_gradients():
    torch = torch_or_skip()
    mine, theirs = check_against_torch(torch, "Gamma", dict(concentration=CONCENTRATION, rate=RATE),
                                       POSITIVE_VALUE, methods=("log_prob",))
    value = genesis.tensor(POSITIVE_VALUE, dtype=genesis.float64)
    np.testing.assert_allclose(mine.cdf(value).detach().numpy(),
                               theirs.cdf(torch.tensor(POSITIVE_VALUE, dtype=torch.float64)).detach().numpy(),
                               rtol=1e-10)


def test_beta_and_dirichlet_match_pytorch_with_gradients():
    torch = torch_or_skip()
    check_against_torch(torch, "Beta", dict(concentration1=[[0.4], [3.0]], concentration0=[0.7, 1.0, 5.0]),
                        UNIT_VALUE, methods=("log_prob",))
    check_against_torch(torch, "Dirichlet", dict(concentration=[[0.4, 2.0, 5.0], [1.5, 0.8, 3.0]]),
                        SIMPLEX_VALUE, methods=("log_prob",))
    check_against_torch(torch, "Dirichlet", dict(concentration=[[0.4, 0.5, 0.9], [1.5, 0.8, 3.0]]),
                        SIMPLEX_VALUE, methods=(), properties=("mean", "mode", "variance"))
    mine, theirs = D.Beta(2.0, 3.0), torch.distributions.Beta(2.0, 3.0)
    assert mine.batch_shape == theirs.batch_shape == () and mine.mean.item() == pytest.approx(0.4)


def test_invalid_arguments_raise_as_in_pytorch():
    torch = torch_or_skip()
    cases = [("Gamma", dict(concentration=[-1.0], rate=[1.0])), ("Gamma", dict(concentration=[1.0], rate=[0.0])),
             ("Beta", dict(concentration1=[0.0], concentration0=[1.0])),
             ("Dirichlet", dict(concentration=[1.0, -0.5]))]
    for name, params in cases:
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in params.items()})
        with pytest.raises(ValueError) as mine:
            getattr(D, name)(**{k: genesis.tensor(v) for k, v in params.items()})
        assert str(mine.value).split(" of distribution")[0] == str(theirs.value).split(" of distribution")[0]
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(genesis.tensor(1.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Beta(genesis.tensor([2.0]), genesis.tensor([2.0])).log_prob(genesis.tensor([1.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.Dirichlet(genesis.ones(3)).log_prob(genesis.tensor([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.Gamma(genesis.tensor([2.0]), 1.0).log_prob(genesis.tensor([-0.5]))


def test_gradcheck_of_log_prob_and_entropy():
    c = genesis.tensor(CONCENTRATION, dtype=genesis.float64, requires_grad=True)
    r = genesis.tensor(RATE, dtype=genesis.float64, requires_grad=True)
    value = genesis.tensor(POSITIVE_VALUE, dtype=genesis.float64)
    assert gradcheck(lambda c, r: D.Gamma(c, r).log_prob(value) + D.Gamma(c, r).entropy(), (c, r))
    b = genesis.tensor([0.7, 1.0, 5.0], dtype=genesis.float64, requires_grad=True)
    unit = genesis.tensor(UNIT_VALUE, dtype=genesis.float64)
    assert gradcheck(lambda a, b: D.Beta(a, b).log_prob(unit) + D.Beta(a, b).entropy(), (c, b))
    alpha = genesis.tensor([[0.4, 2.0, 5.0], [1.5, 0.8, 3.0]], dtype=genesis.float64, requires_grad=True)
    simplex = genesis.tensor(SIMPLEX_VALUE, dtype=genesis.float64)
    assert gradcheck(lambda a: D.Dirichlet(a).log_prob(simplex) + D.Dirichlet(a).entropy(), (alpha,))


ALPHAS = [0.05, 0.3, 1.0, 2.5, 7.0, 40.0, 300.0]


def _exact_gamma_derivative(mp, alpha, x):
    mp.mp.dps = 40
    dP = mp.diff(lambda a: mp.gammainc(a, 0, x, regularized=True), alpha)
    density = mp.exp((alpha - 1) * mp.log(x) - x - mp.loggamma(alpha))
    return float(-dP / density)


def _exact_beta_derivative(mp, x, a, b):
    mp.mp.dps = 40
    dI = mp.diff(lambda s: mp.betainc(s, b, 0, x, regularized=True), a)
    density = mp.exp((a - 1) * mp.log(x) + (b - 1) * mp.log(1 - mp.mpf(x)) - mp.log(mp.beta(a, b)))
    return float(-dI / density)


def test_sample_derivatives_are_exact():
    mp = pytest.importorskip("mpmath")
    rng = np.random.default_rng(0)
    for alpha in ALPHAS:
        xs = np.maximum(rng.gamma(alpha, size=4), 1e-300)
        exact = [_exact_gamma_derivative(mp, alpha, float(x)) for x in xs]
        np.testing.assert_allclose(gamma_sample_derivative(np, np.full(4, alpha), xs), exact, rtol=1e-12)
    for a, b in [(0.3, 0.7), (1.0, 1.0), (2.5, 4.0), (10.0, 3.0), (0.5, 30.0), (60.0, 80.0),
                 (0.01, 0.01), (1e3, 1e3), (1.0, 1e4), (1e4, 1.0)]:
        xs = np.clip(rng.beta(a, b, size=4), 1e-300, 1 - 1e-16)
        exact = [_exact_beta_derivative(mp, mp.mpf(float(x)), a, b) for x in xs]
        # a ≫ b leaves a cancellation in the closing bracket: about 1e-11 there
        np.testing.assert_allclose(beta_sample_derivative(np, xs, np.full(4, a), np.full(4, b)), exact,
                                   rtol=1e-9 if a / b > 100 else 1e-12, err_msg=f"Beta({a}, {b})")


def test_sample_derivatives_match_finite_differences_of_the_cdfs():
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(1)
    step = 1e-6
    for alpha in ALPHAS[1:]:
        xs = rng.gamma(alpha, size=5)
        density = np.exp((alpha - 1) * np.log(xs) - xs - special.gammaln(alpha))
        dP = (special.gammainc(alpha + step, xs) - special.gammainc(alpha - step, xs)) / (2 * step)
        np.testing.assert_allclose(gamma_sample_derivative(np, np.full(5, alpha), xs), -dP / density, rtol=1e-5)
    a, b = 2.5, 4.0
    xs = rng.beta(a, b, size=5)
    density = np.exp((a - 1) * np.log(xs) + (b - 1) * np.log1p(-xs) - special.betaln(a, b))
    dI = (special.betainc(a + step, b, xs) - special.betainc(a - step, b, xs)) / (2 * step)
    np.testing.assert_allclose(beta_sample_derivative(np, xs, np.full(5, a), np.full(5, b)), -dI / density,
                               rtol=1e-5)


def test_gamma_rsample_gradients_match_pytorch_on_the_same_samples():
    torch = torch_or_skip()
    genesis.manual_seed(4)
    c = genesis.tensor([[0.3, 1.0, 2.5], [7.0, 40.0, 0.05]], dtype=genesis.float64, requires_grad=True)
    r = genesis.tensor([0.5, 2.0, 1.5], dtype=genesis.float64, requires_grad=True)
    drawn = D.Gamma(c, r).rsample((6,))
    weights = np.linspace(-1.0, 2.0, drawn.numel()).reshape(tuple(drawn.shape))
    (drawn * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    t_c, t_r = (torch.tensor(v.detach().numpy()) for v in (c, r))
    standard = torch.tensor(drawn.detach().numpy()) * t_r        # the Gamma(c, 1) draws
    t_weights = torch.tensor(weights)
    expected_c = (t_weights * torch._standard_gamma_grad(t_c.expand_as(standard), standard) / t_r).sum(0)
    expected_r = (t_weights * -standard / t_r ** 2).sum(0).sum(0)
    np.testing.assert_allclose(c.grad.numpy(), expected_c.numpy(), rtol=TORCH_APPROXIMATION)
    np.testing.assert_allclose(r.grad.numpy(), expected_r.numpy(), rtol=1e-12)


def test_dirichlet_and_beta_rsample_gradients_match_pytorch_on_the_same_samples():
    torch = torch_or_skip()
    genesis.manual_seed(5)
    alpha = genesis.tensor([[0.4, 2.0, 5.0], [1.5, 0.8, 30.0]], dtype=genesis.float64, requires_grad=True)
    drawn = D.Dirichlet(alpha).rsample((4,))
    weights = np.linspace(-1.0, 2.0, drawn.numel()).reshape(tuple(drawn.shape))
    (drawn * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    x, t_alpha, grad = torch.tensor(drawn.detach().numpy()), torch.tensor(alpha.detach().numpy()), torch.tensor(weights)
    t_alpha = t_alpha.expand_as(x)
    scaled = torch._dirichlet_grad(x, t_alpha, t_alpha.sum(-1, True).expand_as(t_alpha))
    expected = (scaled * (grad - (x * grad).sum(-1, True))).sum(0)
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=TORCH_APPROXIMATION, atol=1e-12)
    genesis.manual_seed(6)
    a = genesis.tensor([0.5, 2.0, 9.0], dtype=genesis.float64, requires_grad=True)
    b = genesis.tensor([3.0, 2.0, 0.7], dtype=genesis.float64, requires_grad=True)
    beta_draws = D.Beta(a, b).rsample((5,))
    beta_draws.sum().backward()
    xs, t_a, t_b = (torch.tensor(v.detach().numpy()) for v in (beta_draws, a, b))
    total = (t_a + t_b).expand_as(xs)
    expected_a = (torch._dirichlet_grad(xs, t_a.expand_as(xs), total) * (1 - xs)).sum(0)
    expected_b = (torch._dirichlet_grad(1 - xs, t_b.expand_as(xs), total) * -xs).sum(0)
    np.testing.assert_allclose(a.grad.numpy(), expected_a.numpy(), rtol=TORCH_APPROXIMATION)
    np.testing.assert_allclose(b.grad.numpy(), expected_b.numpy(), rtol=TORCH_APPROXIMATION)


def test_rsample_gradients_are_unbiased():
    """E[dx/da] = dE[x]/da: 1/rate for Gamma, b/(a+b)² for Beta; within 5 standard errors."""
    genesis.manual_seed(8)
    n = 20000
    c = genesis.tensor([0.5, 4.0], dtype=genesis.float64, requires_grad=True)
    rate = genesis.tensor([2.0, 0.5], dtype=genesis.float64)
    draws = D.Gamma(c, rate).rsample((n,))
    per_sample = genesis.autograd.grad(draws.sum(), c)[0].numpy() / n
    assert_close_in_mean = np.abs(per_sample - 1 / rate.numpy())
    assert np.all(assert_close_in_mean < 5 * 2.0 / np.sqrt(n))   # dx/da has sd well under 2/rate here
    a = genesis.tensor([0.5, 3.0], dtype=genesis.float64, requires_grad=True)
    b = genesis.tensor([2.0, 1.5], dtype=genesis.float64)
    beta_draws = D.Beta(a, b).rsample((n,))
    mean_grad = genesis.autograd.grad(beta_draws.sum(), a)[0].numpy() / n
    expected = b.numpy() / (a.detach().numpy() + b.numpy()) ** 2
    assert np.all(np.abs(mean_grad - expected) < 5 * 1.0 / np.sqrt(n))


def test_samples_have_the_right_statistics_and_shapes():
    genesis.manual_seed(9)
    n = 40000
    for dist in (D.Gamma(genesis.tensor([0.3, 2.0, 50.0], dtype=genesis.float64),
                         genesis.tensor([1.0, 0.5, 3.0], dtype=genesis.float64)),
                 D.Beta(genesis.tensor([0.5, 2.0, 30.0], dtype=genesis.float64),
                        genesis.tensor([0.5, 5.0, 3.0], dtype=genesis.float64)),
                 D.Dirichlet(genesis.tensor([0.3, 2.0, 7.0], dtype=genesis.float64))):
        draws = dist.sample((n,))
        assert tuple(draws.shape) == (n, 3) and not draws.requires_grad
        assert_moments(draws.numpy(), dist.mean.numpy(), dist.variance.numpy())
        assert bool(dist.support.check(draws).all().item())
    assert tuple(D.Gamma(genesis.ones(2, 3), 1.0).rsample((4, 5)).shape) == (4, 5, 2, 3)
    assert tuple(D.Dirichlet(genesis.ones(2, 4)).expand((3, 2)).rsample((5,)).shape) == (5, 3, 2, 4)
    beta = D.Beta(genesis.tensor([2.0]), genesis.tensor([3.0])).expand((6,))
    assert beta.batch_shape == (6,) and tuple(beta.rsample().shape) == (6,)
    assert D.Gamma(genesis.tensor([1e-3]), 1.0).sample((100,)).min().item() > 0   # clamped to tiny


def _beta_ppo_actor_loss(lib, weight, obs, actions, old_log_prob, advantages, clip=0.2):
    """A PPO clipped surrogate for a Beta policy over actions in (0, 1)."""
    concentrations = (obs @ weight).exp() + 1.0
    policy = lib.distributions.Beta(concentrations[:, 0], concentrations[:, 1])
    ratio = (policy.log_prob(actions) - old_log_prob).exp()
    surrogate = lib.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    return -surrogate.mean() - 0.01 * policy.entropy().mean()


def test_beta_policy_ppo_actor_loss_matches_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    weight, obs = rng.normal(size=(3, 2)) * 0.5, rng.normal(size=(10, 3))
    actions, old, adv = rng.uniform(0.05, 0.95, size=10), rng.normal(size=10) * 0.1, rng.normal(size=10)
    mine_weight = genesis.tensor(weight, dtype=genesis.float64, requires_grad=True)
    their_weight = torch.tensor(weight, dtype=torch.float64, requires_grad=True)
    data = (obs, actions, old, adv)
    loss = _beta_ppo_actor_loss(genesis, mine_weight, *(genesis.tensor(v, dtype=genesis.float64) for v in data))
    t_loss = _beta_ppo_actor_loss(torch, their_weight, *(torch.tensor(v) for v in data))
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(mine_weight.grad.numpy(), their_weight.grad.numpy(), rtol=1e-10)


def test_dirichlet_vae_style_term_matches_pytorch_on_the_same_samples():
    """A reparameterised Dirichlet posterior scored under a Gamma-built prior density: the
    sample is genesis's; PyTorch replays it through a Function whose backward is its own
    `_dirichlet_grad`, so the whole chain is compared within PyTorch's approximation."""
    torch = torch_or_skip()

    class Replay(torch.autograd.Function):
        @staticmethod
        def forward(ctx, concentration, sample):
            ctx.save_for_backward(concentration, sample)
            return sample.clone()

        @staticmethod
        def backward(ctx, grad):
            concentration, x = ctx.saved_tensors
            total = concentration.sum(-1, True).expand_as(concentration)
            return torch._dirichlet_grad(x, concentration, total) * (grad - (x * grad).sum(-1, True)), None

    rng = np.random.default_rng(3)
    encoder = rng.normal(size=(4, 3)) * 0.3
    inputs = rng.normal(size=(5, 4))
    mine_w = genesis.tensor(encoder, dtype=genesis.float64, requires_grad=True)
    their_w = torch.tensor(encoder, requires_grad=True)
    genesis.manual_seed(10)
    concentration = (genesis.tensor(inputs, dtype=genesis.float64) @ mine_w).exp()
    posterior = D.Dirichlet(concentration)
    z = posterior.rsample()
    prior = D.Dirichlet(genesis.full((3,), 0.7, dtype=genesis.float64))
    rate = D.Gamma(concentration.sum(-1), 1.0)
    loss = (posterior.log_prob(z) - prior.log_prob(z)).mean() - rate.log_prob(genesis.full((5,), 3.0, dtype=genesis.float64)).mean()
    t_concentration = (torch.tensor(inputs) @ their_w).exp()
    t_z = Replay.apply(t_concentration, torch.tensor(z.detach().numpy()))
    t_loss = (torch.distributions.Dirichlet(t_concentration).log_prob(t_z)
              - torch.distributions.Dirichlet(torch.full((3,), 0.7, dtype=torch.float64)).log_prob(t_z)).mean() \
        - torch.distributions.Gamma(t_concentration.sum(-1), 1.0).log_prob(torch.full((5,), 3.0, dtype=torch.float64)).mean()
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(mine_w.grad.numpy(), their_w.grad.numpy(), rtol=TORCH_APPROXIMATION, atol=1e-10)
