"""Margin, embedding and likelihood losses, gumbel_softmax, Unfold/Fold and Softmax2d:
values and gradients against PyTorch, gradients against finite differences."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


SIGNS = np.array([1.0, -1.0, 1.0, -1.0])
CASES = [
    ("cosine_embedding_loss", [data((4, 3)), data((4, 3), 1)], [SIGNS], {"margin": 0.2}),
    ("margin_ranking_loss", [data(4), data(4, 1)], [SIGNS], {"margin": 0.5}),
    ("hinge_embedding_loss", [data(4)], [SIGNS], {"margin": 0.7}),
    ("triplet_margin_loss", [data((4, 3)), data((4, 3), 1), data((4, 3), 2)], [], {"margin": 2.0}),
    ("triplet_margin_loss", [data((4, 3)), data((4, 3), 1), data((4, 3), 2)], [], {"swap": True, "p": 1}),
    ("soft_margin_loss", [data(4)], [SIGNS], {"reduction": "sum"}),
    ("multilabel_soft_margin_loss", [data((4, 3))], [(data((4, 3), 5) > 0).astype(float)], {}),
    ("gaussian_nll_loss", [data((4, 2)), data((4, 2), 1) ** 2 + 0.1], [data((4, 2), 2)], {"full": True}),
    ("poisson_nll_loss", [data((4, 2))], [np.abs(data((4, 2), 1)) * 3], {"full": True}),
    ("poisson_nll_loss", [np.abs(data((4, 2))) + 0.5], [np.abs(data((4, 2), 1))], {"log_input": False}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def _arrange(name, differentiable, constants):
    """The arguments in the function's order (gaussian_nll_loss takes var after target)."""
    if name == "gaussian_nll_loss":
        return [differentiable[0], constants[0], differentiable[1]]
    return differentiable + constants


@pytest.mark.parametrize("name, differentiable, constants, options", CASES, ids=IDS)
def test_matches_pytorch_values_and_gradients(name, differentiable, constants, options):
    torch = torch_or_skip()
    mine_in = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in differentiable]
    their_in = [torch.tensor(a, requires_grad=True) for a in differentiable]
    mine = getattr(F, name)(*_arrange(name, mine_in, [genesis.tensor(c, dtype=genesis.float64) for c in constants]),
                            **options)
    theirs = getattr(torch.nn.functional, name)(*_arrange(name, their_in, [torch.tensor(c) for c in constants]),
                                                **options)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    mine.sum().backward(), theirs.sum().backward()
    for a, b in zip(mine_in, their_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name, differentiable, constants, options", CASES, ids=IDS)
def test_gradients_against_finite_differences(name, differentiable, constants, options):
    inputs = tuple(genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in differentiable)
    fixed = [genesis.tensor(c, dtype=genesis.float64) for c in constants]
    assert genesis.autograd.gradcheck(
        lambda *t: getattr(F, name)(*_arrange(name, list(t), fixed), **options), inputs)


def test_modules_match_their_functions():
    x1, x2 = genesis.tensor(data((4, 3))), genesis.tensor(data((4, 3), 1))
    y = genesis.tensor(SIGNS, dtype=genesis.float32)
    assert genesis.nn.CosineEmbeddingLoss(0.1)(x1, x2, y).item() == F.cosine_embedding_loss(x1, x2, y, 0.1).item()
    assert genesis.nn.TripletMarginLoss()(x1, x2, x1 * 2).item() == F.triplet_margin_loss(x1, x2, x1 * 2).item()
    assert genesis.nn.GaussianNLLLoss()(x1, x2, genesis.ones(4, 1)).item() == \
        F.gaussian_nll_loss(x1, x2, genesis.ones(4, 1)).item()
    assert genesis.nn.HingeEmbeddingLoss(size_average=False)(x1[:, 0], y).item() == \
        F.hinge_embedding_loss(x1[:, 0], y, reduction="sum").item()
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x1, x2, -genesis.ones(4, 3))


@pytest.mark.parametrize("margin", [0.0, -1.0])
def test_a_triplet_margin_that_is_not_positive_is_refused_as_pytorch_does(margin):
    x = genesis.tensor(data((4, 3)))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(x, x, x, margin=margin)
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0"):
        genesis.nn.TripletMarginLoss(margin=margin)
    # the top-level form (torch.triplet_margin_loss) takes any margin: max(0, 0 - 0 + margin)
    assert genesis.triplet_margin_loss(x, x, x, margin, 2, 1e-6, False, 1).item() == 0.0
    torch = torch_or_skip()
    t = torch.tensor(data((4, 3)))
    for call in (lambda: torch.nn.functional.triplet_margin_loss(t, t, t, margin=margin),
                 lambda: torch.nn.TripletMarginLoss(margin=margin)):
        with pytest.raises(ValueError):
            call()
    assert torch.triplet_margin_loss(t, t, t, margin, 2, 1e-6, False, 1).item() == 0.0


def test_gumbel_softmax_samples_and_hard_passes_the_soft_gradient():
    genesis.manual_seed(0)
    logits = genesis.tensor(data((5, 4)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(5), rtol=1e-6)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(hard.detach().numpy().reshape(-1).tolist()) == {0.0, 1.0}
    assert (hard.sum(-1) == 1).all().item()
    (hard * genesis.arange(4.0)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


def test_unfold_fold_and_softmax2d_match_pytorch():
    torch = torch_or_skip()
    x = data((2, 3, 5, 5))
    mine = genesis.nn.Unfold(kernel_size=2, stride=1, padding=1)(genesis.tensor(x, dtype=genesis.float64))
    theirs = torch.nn.Unfold(kernel_size=2, stride=1, padding=1)(torch.tensor(x))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy())
    back = genesis.nn.Fold((5, 5), 2, padding=1)(mine).numpy()
    np.testing.assert_allclose(back, torch.nn.Fold((5, 5), 2, padding=1)(theirs).numpy())
    np.testing.assert_allclose(genesis.nn.Softmax2d()(genesis.tensor(x, dtype=genesis.float64)).numpy(),
                               torch.nn.Softmax2d()(torch.tensor(x)).numpy(), rtol=1e-12)


def test_poisson_nll_full_target_gradient_at_zero_matches_pytorch():
    """Stirling's term composed as PyTorch's: its 0 * log 0 makes the target's gradient nan
    at 0, even though the term is masked out there."""
    torch = torch_or_skip()
    grads = []
    for library in (genesis, torch):
        x = library.tensor([0.0, 2.0, 1.5], requires_grad=True)
        t = library.tensor([0.0, 3.0, 1.0], requires_grad=True)
        library.nn.functional.poisson_nll_loss(x, t, log_input=False, full=True).backward()
        grads.append((x.grad.numpy(), t.grad.numpy()))
    for mine, reference in zip(*grads):
        np.testing.assert_allclose(mine, reference, rtol=1e-6)
