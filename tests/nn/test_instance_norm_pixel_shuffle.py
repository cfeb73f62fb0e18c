"""InstanceNorm1d/2d/3d and F.instance_norm, PixelShuffle/PixelUnshuffle: values, running
statistics and gradients against PyTorch, and gradients against finite differences."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm2d", (2, 3, 4, 4)),
                                         ("InstanceNorm3d", (1, 3, 2, 3, 2)),
                                         ("InstanceNorm1d", (3, 5))])
@pytest.mark.parametrize("options", [{}, {"affine": True}, {"track_running_stats": True},
                                     {"affine": True, "track_running_stats": True, "momentum": 0.3}])
def test_instance_norm_modules_match_pytorch(name, shape, options):
    torch = torch_or_skip()
    mine, theirs = getattr(genesis.nn, name)(3, **options), getattr(torch.nn, name)(3, **options)
    if options.get("affine"):
        weight, bias = data(3, 1) + 1, data(3, 2)
        mine.weight.data = genesis.tensor(weight, dtype=genesis.float32)
        mine.bias.data = genesis.tensor(bias, dtype=genesis.float32)
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(weight)), theirs.bias.copy_(torch.tensor(bias))
    x = data(shape)
    a = genesis.tensor(x, dtype=genesis.float32, requires_grad=True)
    b = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    for training in (True, False):
        mine.train(training), theirs.train(training)
        out_a, out_b = mine(a), theirs(b)
        np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-4, atol=1e-5)
    (out_a * genesis.tensor(data(shape, 3), dtype=genesis.float32)).sum().backward()
    (out_b * torch.tensor(data(shape, 3), dtype=torch.float32)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    if options.get("track_running_stats"):
        np.testing.assert_allclose(mine.running_mean.numpy(), theirs.running_mean.numpy(), rtol=1e-5)
        np.testing.assert_allclose(mine.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-5)


def test_instance_norm_gradients_against_finite_differences():
    x = genesis.tensor(data((2, 3, 4)), dtype=genesis.float64, requires_grad=True)
    w = genesis.tensor(data(3, 1) + 1, dtype=genesis.float64, requires_grad=True)
    b = genesis.tensor(data(3, 2), dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x, w, b))


def test_pixel_shuffle_round_trip_and_matches_pytorch():
    torch = torch_or_skip()
    x = data((2, 8, 3, 5))
    mine = F.pixel_shuffle(genesis.tensor(x), 2)
    np.testing.assert_array_equal(mine.numpy(), torch.nn.functional.pixel_shuffle(torch.tensor(x), 2).numpy()
                                  .astype(mine.numpy().dtype))
    back = genesis.nn.PixelUnshuffle(2)(mine)
    np.testing.assert_array_equal(back.numpy(), genesis.tensor(x).numpy())
    np.testing.assert_array_equal(
        F.pixel_unshuffle(genesis.tensor(data((1, 2, 4, 6))), 2).numpy(),
        torch.nn.functional.pixel_unshuffle(torch.tensor(data((1, 2, 4, 6))), 2).numpy().astype(np.float32))
    with pytest.raises(RuntimeError, match="divisible"):
        F.pixel_shuffle(genesis.zeros(1, 3, 2, 2), 2)


def test_pixel_shuffle_gradient_against_finite_differences():
    x = genesis.tensor(data((1, 4, 2, 3)), dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(lambda t: F.pixel_shuffle(t, 2), (x,))
    assert genesis.autograd.gradcheck(lambda t: F.pixel_unshuffle(t, 2), (x.detach().reshape(1, 1, 4, 6)
                                                                      .requires_grad_(),))
