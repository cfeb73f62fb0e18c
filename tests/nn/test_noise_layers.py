"""alpha_dropout, feature_alpha_dropout, rrelu and their modules: what PyTorch gives where
the result is deterministic (evaluation, p = 1, a one-point slope interval), the statistics
and the gradient of the random draws otherwise, and PyTorch's exception types."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from tests.helpers import torch_or_skip


def as_float64(array, requires_grad=False):
    return genesis.tensor(array, dtype=genesis.float64, requires_grad=requires_grad)


def test_alpha_dropout_keeps_mean_and_variance_and_its_gradient_is_the_scale():
    genesis.manual_seed(0)
    x = genesis.randn(200_000, dtype=genesis.float64, requires_grad=True)
    y = F.alpha_dropout(x, 0.2, training=True)
    assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1) < 0.02
    y.sum().backward()
    a = ((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8) ** -0.5
    grad = x.grad.numpy()
    assert set(np.round(np.unique(grad), 12)) == {0.0, round(a, 12)}
    assert abs((grad == 0).mean() - 0.2) < 0.01
    dropped = y.detach().numpy()[grad == 0]
    np.testing.assert_allclose(dropped, -1.7580993408473766 * a + 1.7580993408473766 * a * 0.2)


def test_feature_alpha_dropout_drops_whole_channels():
    genesis.manual_seed(1)
    y = F.feature_alpha_dropout(genesis.randn(50, 40, 6), 0.5, training=True).numpy()
    per_channel = np.ptp(y, axis=2)
    dropped = per_channel == 0
    assert 0.4 < dropped.mean() < 0.6


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_deterministic_cases_match_pytorch(name):
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    for p, training in ((1.0, True), (0.5, False), (0.0, True)):
        mine = getattr(F, name)(as_float64(data), p, training)
        theirs = getattr(torch.nn.functional, name)(torch.tensor(data), p, training)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_in_place_alpha_dropout_writes_its_input():
    x = genesis.randn(5, 4, dtype=genesis.float64)
    assert F.alpha_dropout(x, 1.0, True, inplace=True) is x and x.abs().sum().item() == 0


def test_rrelu_draws_slopes_in_range_and_differentiates_through_them():
    genesis.manual_seed(2)
    x = genesis.randn(10_000, dtype=genesis.float64, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    negative = x.detach().numpy() < 0
    slopes = (y.detach().numpy() / x.detach().numpy())[negative]
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.05
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[negative], slopes)
    np.testing.assert_array_equal(x.grad.numpy()[~negative], 1.0)


def test_rrelu_at_zero_takes_the_slope_as_pytorch():
    torch = torch_or_skip()
    for library in (genesis, torch):
        x = library.tensor([0.0, -1.0, 1.0], requires_grad=True)
        library.nn.functional.rrelu(x, 0.25, 0.25, training=True).sum().backward()
        assert x.grad.tolist() == [0.25, 0.25, 1.0], library.__name__


def test_rrelu_evaluation_and_one_point_interval_match_pytorch():
    torch = torch_or_skip()
    data = np.random.default_rng(3).standard_normal((3, 5))
    for args in ((0.1, 0.3, False), (0.25, 0.25, True)):
        mine = as_float64(data, requires_grad=True)
        theirs = torch.tensor(data, requires_grad=True)
        out, expected = F.rrelu(mine, *args), torch.nn.functional.rrelu(theirs, *args)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-15)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy())


def test_rrelu_in_place():
    torch = torch_or_skip()
    data = np.array([-2.0, 3.0])
    x = as_float64(data)
    assert F.rrelu_(x, 0.2, 0.4) is x
    np.testing.assert_allclose(x.numpy(), torch.nn.functional.rrelu_(torch.tensor(data), 0.2, 0.4).numpy())


ERRORS = [
    ("alpha_dropout", (np.ones(3), 1.5, True), ValueError),
    ("feature_alpha_dropout", (np.ones(3), 0.5, True), RuntimeError),
    ("rrelu", (np.ones(3), 0.5, 0.1, True), RuntimeError),
]


@pytest.mark.parametrize("name, args, error", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_raise_what_pytorch_raises(name, args, error):
    torch = torch_or_skip()
    for library in (genesis, torch):
        call = [library.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        with pytest.raises(error):
            getattr(library.nn.functional, name)(*call)


def test_modules_follow_train_and_eval_and_print_as_pytorch():
    torch = torch_or_skip()
    x = genesis.randn(4, 3, 2)
    for module, theirs in ((nn.AlphaDropout(0.3), torch.nn.AlphaDropout(0.3)),
                           (nn.FeatureAlphaDropout(0.1, True), torch.nn.FeatureAlphaDropout(0.1, True)),
                           (nn.RReLU(0.1, 0.3), torch.nn.RReLU(0.1, 0.3))):
        assert repr(module) == repr(theirs)
        module.eval()
        expected = x if not isinstance(module, nn.RReLU) else F.leaky_relu(x, 0.2)
        np.testing.assert_allclose(module(x).numpy(), expected.numpy(), rtol=1e-6)
    assert nn.AlphaDropout(1.0)(x).abs().sum().item() == 0
    with pytest.raises(ValueError):
        nn.AlphaDropout(2.0)
