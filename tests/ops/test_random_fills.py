"""In-place random fills, bernoulli, multinomial and normal: shapes, ranges, generators,
the copy_ rules they follow, and the errors PyTorch raises."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def seeded(seed=0):
    return genesis.Generator().manual_seed(seed)


def test_fills_draw_in_range_repeatably_with_a_generator():
    a = genesis.empty(1000).uniform_(-2.0, 3.0, generator=seeded())
    b = genesis.empty(1000).uniform_(-2.0, 3.0, generator=seeded())
    assert a.tolist() == b.tolist() and -2.0 <= a.min().item() and a.max().item() < 3.0
    normal = genesis.empty(20000).normal_(1.0, 2.0, generator=seeded())
    assert abs(normal.mean().item() - 1.0) < 0.1 and abs(normal.std().item() - 2.0) < 0.1
    coins = genesis.empty(10000).bernoulli_(0.25, generator=seeded())
    assert set(coins.tolist()) <= {0.0, 1.0} and abs(coins.mean().item() - 0.25) < 0.03
    dice = genesis.empty(500, dtype=genesis.int64).random_(1, 7, generator=seeded())
    assert set(dice.tolist()) == {1, 2, 3, 4, 5, 6}
    waits = genesis.empty(20000).exponential_(4.0, generator=seeded())
    assert waits.min().item() >= 0 and abs(waits.mean().item() - 0.25) < 0.02


def test_a_fill_follows_copy_rules_on_leaves_that_require_grad():
    w = genesis.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.normal_()
    with genesis.no_grad():
        w.normal_()
    assert w.requires_grad and w.grad_fn is None


def test_bad_arguments_raise_as_in_pytorch():
    torch = torch_or_skip()
    for call in (lambda m, x: x.normal_(0.0, -1.0), lambda m, x: x.uniform_(2.0, 1.0),
                 lambda m, x: x.exponential_(0.0), lambda m, x: x.random_(5, 2),
                 lambda m, x: m.multinomial(x.abs(), 9),
                 lambda m, x: m.multinomial(x.abs() * 0, 1)):
        with pytest.raises(RuntimeError):
            call(torch, torch.ones(4))
        with pytest.raises(RuntimeError):
            call(genesis, genesis.ones(4))


def test_bernoulli_multinomial_and_normal_draw_what_they_say():
    probabilities = genesis.tensor([0.0, 1.0, 0.0, 1.0])
    assert genesis.bernoulli(probabilities).tolist() == [0.0, 1.0, 0.0, 1.0]
    rows = genesis.tensor([[0.0, 5.0, 0.0], [1.0, 0.0, 0.0]])
    assert genesis.multinomial(rows, 1).tolist() == [[1], [0]]
    picked = genesis.multinomial(genesis.ones(6), 6, generator=seeded())
    assert sorted(picked.tolist()) == list(range(6)) and picked.dtype is genesis.int64
    repeated = genesis.tensor([1.0, 3.0]).multinomial(4000, replacement=True, generator=seeded())
    assert abs(repeated.float().mean().item() - 0.75) < 0.03
    assert genesis.normal(genesis.zeros(2, 3), genesis.ones(3)).shape == (2, 3)
    assert genesis.normal(2.0, 0.5, (4,)).shape == (4,)


def test_multinomial_without_replacement_takes_zero_weights_last_as_pytorch_on_the_cpu():
    """genesis refused more samples than non-zero weights; PyTorch's CPU multinomial draws the
    weighted categories first, then the zero ones, and refuses integer weights."""
    for _ in range(20):
        picked = genesis.multinomial(genesis.tensor([1.0, 0.0, 1.0]), 3).tolist()
        assert sorted(picked[:2]) == [0, 2] and picked[2] == 1
    assert sorted(genesis.multinomial(genesis.tensor([0.2, 0.0, 0.8]), 2).tolist()) == [0, 2]
    draws = genesis.multinomial(genesis.tensor([[1.0, 2.0, 3.0]]).expand(6000, 3), 1, generator=seeded())
    counts = np.bincount(draws.flatten().numpy(), minlength=3) / 6000
    assert np.allclose(counts, [1 / 6, 2 / 6, 3 / 6], atol=0.03)
    firsts_then_seconds = genesis.multinomial(genesis.tensor([[1.0, 2.0, 3.0]]).expand(6000, 3), 2,
                                              generator=seeded())[:, 1].numpy()
    second_is_0 = (1 / 3 * 1 / 4 + 1 / 2 * 1 / 3)  # P(second = 0) without replacement
    assert abs((firsts_then_seconds == 0).mean() - second_is_0) < 0.03
    torch = torch_or_skip()
    assert sorted(torch.multinomial(torch.tensor([1.0, 0.0, 1.0]), 3).tolist()) == [0, 1, 2]
    for library in (genesis, torch):
        with pytest.raises(RuntimeError):
            library.multinomial(library.tensor([1, 2]), 1)


def test_a_generator_on_another_device_is_refused():
    class Elsewhere(genesis.Generator):
        pass
    generator = Elsewhere()
    generator.device = genesis.device("cuda")
    with pytest.raises(RuntimeError, match="cannot draw numbers for cpu"):
        genesis.randn(2, generator=generator)


def test_generator_state_round_trips_and_seed_repeats():
    generator = seeded(5)
    state = generator.get_state()
    first = genesis.rand(4, generator=generator).tolist()
    generator.set_state(state)
    assert genesis.rand(4, generator=generator).tolist() == first
    assert seeded(5).initial_seed() == 5
    assert np.isclose(genesis.randn(3, generator=seeded(1)).numpy(),
                      genesis.randn(3, generator=seeded(1)).numpy()).all()


@pytest.mark.parametrize("name, args, mean, spread", [
    ("cauchy_", (1.0, 0.5), 1.0, 0.5),            # median and the half interquartile range
    ("log_normal_", (0.0, 0.25), float(np.exp(0.25 ** 2 / 2)), None),
    ("geometric_", (0.25,), 4.0, None)])
def test_more_in_place_distributions_have_their_moments(name, args, mean, spread):
    draws = getattr(genesis.zeros(200_000, dtype=genesis.float64), name)(
        *args, generator=genesis.Generator().manual_seed(0)).numpy()
    if spread is None:
        assert abs(draws.mean() - mean) < 0.02 * mean
    else:
        low, median, high = np.percentile(draws, [25, 50, 75])
        assert abs(median - mean) < 0.01 and abs((high - low) / 2 - spread) < 0.01
    if name == "geometric_":
        assert draws.min() == 1 and np.all(draws == np.round(draws))


def test_poisson_and_binomial_sample_their_means():
    generator = genesis.Generator().manual_seed(0)
    rates = genesis.full((100_000,), 3.0)
    assert abs(genesis.poisson(rates, generator).mean().item() - 3.0) < 0.03
    counts = genesis.binomial(genesis.full((100_000,), 10.0), genesis.full((100_000,), 0.3),
                              generator)
    assert abs(counts.mean().item() - 3.0) < 0.03 and counts.max().item() <= 10
    with pytest.raises(RuntimeError, match="non-negative"):
        genesis.poisson(genesis.tensor([-1.0]))


def test_new_distribution_arguments_are_checked_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        with pytest.raises(RuntimeError):
            library.zeros(2).geometric_(1.5)
        with pytest.raises(RuntimeError):
            library.zeros(2).log_normal_(0.0, -1.0)
