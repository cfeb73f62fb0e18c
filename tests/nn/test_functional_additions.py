"""The in-place activations (F.elu_, ...), channel_shuffle, pdist and the deprecated
upsample_nearest/upsample_bilinear against PyTorch: values, gradients, exception types,
gradcheck in float64; their modules (ChannelShuffle)."""
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from tests.helpers import torch_or_skip


def as_float64(array, requires_grad=False):
    return genesis.tensor(array, dtype=genesis.float64, requires_grad=requires_grad)

DATA = np.random.default_rng(0).standard_normal((3, 4))

IN_PLACE = [
    ("elu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.7)),
    ("selu_", ()), ("celu_", (2.0,)), ("threshold_", (0.1, 9.0)),
]


@pytest.mark.parametrize("name, args", IN_PLACE, ids=[f"{n}{a}" for n, a in IN_PLACE])
def test_in_place_activations_match_pytorch(name, args):
    torch = torch_or_skip()
    mine_leaf, their_leaf = as_float64(DATA, requires_grad=True), torch.tensor(DATA, requires_grad=True)
    mine, theirs = mine_leaf * 1, their_leaf * 1
    assert getattr(F, name)(mine, *args) is mine
    getattr(torch.nn.functional, name)(theirs, *args)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    weights = np.random.default_rng(1).standard_normal(DATA.shape)
    (mine * as_float64(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name)(as_float64(DATA, requires_grad=True), *args)


@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 3), ((2, 4, 3, 2), 2), ((1, 8, 2, 2, 1), 4)])
def test_channel_shuffle_matches_pytorch(shape, groups):
    torch = torch_or_skip()
    data = np.random.default_rng(2).standard_normal(shape)
    mine, theirs = as_float64(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out = nn.ChannelShuffle(groups)(mine)
    expected = torch.nn.ChannelShuffle(groups)(theirs)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(F.native_channel_shuffle(mine, groups).detach().numpy(),
                                  expected.detach().numpy())
    weights = np.random.default_rng(3).standard_normal(shape)
    (out * as_float64(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())
    assert repr(nn.ChannelShuffle(groups)) == repr(torch.nn.ChannelShuffle(groups))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf")])
def test_pdist_matches_pytorch_and_gradchecks(p):
    torch = torch_or_skip()
    data = np.random.default_rng(4).standard_normal((5, 3))
    mine, theirs = as_float64(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, expected = F.pdist(mine, p), torch.nn.functional.pdist(theirs, p)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
    assert genesis.autograd.gradcheck(lambda x: F.pdist(x, p), (as_float64(data, requires_grad=True),))


BAD = [
    ("channel_shuffle", (np.ones((2, 4, 3)), 3), RuntimeError),
    ("channel_shuffle", (np.ones((2, 4, 3)), 0), RuntimeError),
    ("channel_shuffle", (np.ones((2, 4)), 2), RuntimeError),
    ("pdist", (np.ones((2, 3, 4)),), RuntimeError),
    ("pdist", (np.ones((3, 4)), -1.0), RuntimeError),
]


@pytest.mark.parametrize("name, args, error", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_raises_what_pytorch_raises(name, args, error):
    torch = torch_or_skip()
    for library in (genesis, torch):
        call = [library.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        with pytest.raises(error):
            getattr(library.nn.functional, name)(*call)


@pytest.mark.parametrize("name, kwargs", [("upsample_nearest", {"scale_factor": 2}),
                                          ("upsample_bilinear", {"size": (5, 7)}),
                                          ("upsample_bilinear", {"scale_factor": 2})])
def test_deprecated_upsample_aliases_warn_and_match_pytorch(name, kwargs):
    torch = torch_or_skip()
    data = np.random.default_rng(5).standard_normal((1, 2, 3, 4))
    with pytest.warns(UserWarning, match="deprecated"):
        out = getattr(F, name)(as_float64(data), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(torch.nn.functional, name)(torch.tensor(data), **kwargs)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
