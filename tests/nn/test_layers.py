"""Layers: Linear, Bilinear, Identity, Flatten/Unflatten, Dropout, Embedding (values and
gradients vs finite differences and PyTorch)."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip


def _f64(rng, *shape, requires_grad=True):
    return genesis.from_numpy(rng.standard_normal(shape)).requires_grad_(requires_grad)


@pytest.mark.parametrize("input_shape", [(4, 3), (3,), (2, 5, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_gradients_match_finite_differences(rng, input_shape, with_bias):
    x = _f64(rng, *input_shape)
    weight = _f64(rng, 2, 3)
    bias = _f64(rng, 2) if with_bias else None
    assert gradcheck(F.linear, (x, weight, bias), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(F.linear, (x, weight, bias), atol=1e-6, rtol=1e-5)


def test_linear_when_only_some_inputs_require_grad(rng):
    x = _f64(rng, 4, 3, requires_grad=False)
    weight = _f64(rng, 2, 3)
    bias = _f64(rng, 2, requires_grad=False)
    assert gradcheck(F.linear, (x, weight, bias), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(lambda w: F.linear(x, w).tanh(), (weight,), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_matches_pytorch(rng, dtype):
    torch = torch_or_skip()
    x = rng.standard_normal((2, 5, 3)).astype(dtype)
    layer = nn.Linear(3, 4, dtype=getattr(genesis, dtype))
    reference = torch.nn.Linear(3, 4, dtype=getattr(torch, dtype))
    with torch.no_grad():
        reference.weight.copy_(torch.from_numpy(layer.weight.detach().numpy()))
        reference.bias.copy_(torch.from_numpy(layer.bias.detach().numpy()))
    ours = layer(genesis.from_numpy(x).requires_grad_())
    theirs = reference(torch.from_numpy(x).requires_grad_())
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=rtol)
    (ours ** 2).sum().backward()
    (theirs ** 2).sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), reference.weight.grad.numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(layer.bias.grad.numpy(), reference.bias.grad.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")  # torch's, in_features=0
@pytest.mark.parametrize("input_shape, in_features", [((2, 0, 3), 3), ((2, 5, 0), 0),
                                                      ((4, 0), 0), ((3, 2, 3), 3)])
def test_linear_with_empty_extents_or_a_non_contiguous_input_matches_pytorch(
        rng, input_shape, in_features):
    torch = torch_or_skip()
    x = rng.standard_normal(input_shape)
    layer = nn.Linear(in_features, 4, dtype=genesis.float64)
    reference = torch.nn.Linear(in_features, 4, dtype=torch.float64)
    with torch.no_grad():
        reference.weight.copy_(torch.from_numpy(layer.weight.detach().numpy()))
        reference.bias.copy_(torch.from_numpy(layer.bias.detach().numpy()))
    ours_x = genesis.from_numpy(x).requires_grad_()
    theirs_x = torch.from_numpy(x).requires_grad_()
    # a transposed view when there are three dims (its rows are not contiguous)
    ours = layer(ours_x.transpose(0, 1) if x.ndim == 3 else ours_x)
    theirs = reference(theirs_x.transpose(0, 1) if x.ndim == 3 else theirs_x)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    (ours ** 2).sum().backward()
    (theirs ** 2).sum().backward()
    for got, expected in ((ours_x.grad, theirs_x.grad), (layer.weight.grad, reference.weight.grad),
                          (layer.bias.grad, reference.bias.grad)):
        assert got.shape == tuple(expected.shape)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_linear_default_init_bounds_and_repr():
    layer = nn.Linear(400, 300)
    bound = 1 / 20
    assert np.abs(layer.weight.numpy(force=True)).max() <= bound
    assert np.abs(layer.weight.numpy(force=True)).max() > 0.99 * bound
    assert np.abs(layer.bias.numpy(force=True)).max() <= bound
    assert repr(nn.Linear(2, 3, bias=False)) == "Linear(in_features=2, out_features=3, bias=False)"
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=genesis.float64).weight.dtype == genesis.float64


def test_linear_errors_name_shapes_and_dtypes():
    layer = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=r"input of shape \(4, 5\) can't be multiplied by a "
                                           r"weight of shape \(2, 3\)"):
        layer(genesis.ones(4, 5))
    with pytest.raises(RuntimeError, match="dtypes differ \\(input float64, weight float32, bias float32\\)"):
        layer(genesis.ones(4, 3, dtype=genesis.float64))
    with pytest.raises(RuntimeError, match=r"bias has shape \(3,\), expected \(2,\)"):
        F.linear(genesis.ones(1, 3), layer.weight, genesis.ones(3))


def test_identity_flatten_unflatten():
    x = genesis.arange(24.0).reshape(2, 3, 4)
    assert nn.Identity(54, unused=True)(x) is x
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(-1, (2, -1))(x).shape == (2, 3, 2, 2)
    assert repr(nn.Unflatten(1, (3, 4))) == "Unflatten(dim=1, unflattened_size=(3, 4))"


def test_dropout_zeroes_a_share_p_scales_the_rest_and_routes_gradients():
    x = genesis.ones(100, 100, requires_grad=True)
    out = F.dropout(x, 0.3)
    values = out.detach().numpy()
    assert set(np.unique(values)) <= {0.0, np.float32(1 / 0.7)}
    assert (values == 0).mean() == pytest.approx(0.3, abs=0.02)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # d out / d x is the scaled mask
    assert out.grad_fn._forward_cls.nondeterministic


def test_dropout_modes_and_edge_probabilities():
    x = genesis.ones(3, 4)
    layer = nn.Dropout(0.5)
    assert layer.eval()(x) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).numpy().sum() == 0
    genesis.manual_seed(7)
    first = F.dropout(x, 0.5).tolist()
    genesis.manual_seed(7)
    assert F.dropout(x, 0.5).tolist() == first
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(RuntimeError, match="floating point"):
        F.dropout(genesis.ones(2, dtype=genesis.int64))
    with pytest.raises(RuntimeError, match="leaf tensor"):
        F.dropout(genesis.ones(2, requires_grad=True), inplace=True)


def test_dropout_in_place_keeps_gradients_right():
    leaf = genesis.ones(50, requires_grad=True)
    hidden = leaf * 2
    out = F.dropout(hidden, 0.5, inplace=True)
    assert out is hidden
    out.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), hidden.detach().numpy())


def test_embedding_matches_pytorch_including_repeats_padding_and_max_norm(rng):
    torch = torch_or_skip()
    table = rng.standard_normal((6, 3)) * 2
    indices = np.array([[1, 2, 2], [0, 5, 1]])
    for options in ({}, {"padding_idx": 2}, {"max_norm": 1.0}, {"padding_idx": -1, "max_norm": 1.5}):
        ours = nn.Embedding(6, 3, _weight=genesis.from_numpy(table.copy()), **options)
        theirs = torch.nn.Embedding(6, 3, _weight=torch.from_numpy(table.copy()), **options)
        out = ours(genesis.from_numpy(indices))
        reference = theirs(torch.from_numpy(indices))
        np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-12)
        weights = rng.standard_normal(out.shape)
        out.backward(genesis.from_numpy(weights))
        reference.backward(torch.from_numpy(weights))
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                                   rtol=1e-6)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_scale_grad_by_freq_matches_pytorch(rng, padding_idx):
    torch = torch_or_skip()
    table = rng.standard_normal((6, 3))
    indices = np.array([[1, 2, 2], [0, 2, 1], [4, 4, 2]])
    # positionally, as PyTorch orders them: padding_idx, max_norm, norm_type, scale_grad_by_freq
    ours = nn.Embedding(6, 3, padding_idx, None, 2.0, True, _weight=genesis.from_numpy(table.copy()))
    theirs = torch.nn.Embedding(6, 3, padding_idx, None, 2.0, True,
                                _weight=torch.from_numpy(table.copy()))
    assert repr(ours) == repr(theirs)
    weights = rng.standard_normal(indices.shape + (3,))
    ours(genesis.from_numpy(indices)).backward(genesis.from_numpy(weights))
    theirs(torch.from_numpy(indices)).backward(torch.from_numpy(weights))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    functional = genesis.from_numpy(table.copy()).requires_grad_()
    F.embedding(genesis.from_numpy(indices), functional, padding_idx, scale_grad_by_freq=True,
                sparse=True).backward(genesis.from_numpy(weights))
    np.testing.assert_allclose(functional.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)


def test_embedding_scale_grad_by_freq_backward_is_differentiable(rng):
    """The scaled gradient is a definition, not the derivative (gradcheck can't check it
    against finite differences): what is checked is its own derivative, in the output
    gradient, which a create_graph backward records."""
    weight = _f64(rng, 5, 2)
    indices = genesis.tensor([[0, 3], [3, 3]])

    def scaled_gradient(seed):
        out = F.embedding(indices, weight, scale_grad_by_freq=True)
        return genesis.autograd.grad(out, weight, seed, create_graph=True)[0]

    assert gradcheck(scaled_gradient, (_f64(rng, 2, 2, 2),), atol=1e-6, rtol=1e-5)
    frozen = _f64(rng, 5, 2, requires_grad=False)  # no grad needed: nothing recorded
    assert F.embedding(indices, frozen, scale_grad_by_freq=True).grad_fn is None


def test_embedding_init_padding_and_errors():
    table = nn.Embedding(10, 4, padding_idx=3)
    assert table.weight[3].tolist() == [0.0] * 4
    assert repr(table) == "Embedding(10, 4, padding_idx=3)"
    with pytest.raises(IndexError, match="index 10 is out of range for a table of 10 rows"):
        table(genesis.tensor([1, 10]))
    with pytest.raises(RuntimeError, match="integer tensor"):
        table(genesis.tensor([1.0]))
    with pytest.raises(ValueError, match="padding_idx 12"):
        nn.Embedding(10, 4, padding_idx=12)
    frozen = nn.Embedding.from_pretrained(genesis.ones(3, 2))
    assert not frozen.weight.requires_grad and frozen(genesis.tensor(1)).tolist() == [1.0, 1.0]


def test_embedding_gradient_matches_finite_differences(rng):
    weight = _f64(rng, 5, 2)
    indices = genesis.tensor([[0, 3], [3, 4]])
    # (padding_idx deliberately departs from the true gradient; it is compared with PyTorch above)
    assert gradcheck(lambda w: F.embedding(indices, w), (weight,), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(lambda w: F.embedding(indices, w) ** 2, (weight,), atol=1e-6, rtol=1e-5)


def test_linear_and_cross_entropy_under_autocast():
    layer = nn.Linear(4, 3)
    x = genesis.randn(5, 4)
    with genesis.autocast():
        logits = layer(x)
        hidden = nn.Linear(3, 3)(logits)  # float16 input, float32 weight: cast, not refused
        loss = F.cross_entropy(hidden, genesis.tensor([0, 1, 2, 0, 1]))
    assert logits.dtype == hidden.dtype == genesis.float16 and loss.dtype == genesis.float32
    loss.backward()
    assert layer.weight.grad.dtype == genesis.float32 and layer.bias.grad.dtype == genesis.float32


@pytest.mark.parametrize("leading, with_bias", [((4,), True), ((2, 3), False), ((), True)])
def test_bilinear_matches_pytorch_and_finite_differences(rng, leading, with_bias):
    torch = torch_or_skip()
    ours = nn.Bilinear(3, 2, 4, bias=with_bias, dtype=genesis.float64)
    torch.manual_seed(0)  # the same weights every run
    theirs = torch.nn.Bilinear(3, 2, 4, bias=with_bias, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({key: genesis.from_numpy(value.detach().numpy().copy())
                          for key, value in theirs.state_dict().items()})
    first, second = rng.standard_normal(leading + (3,)), rng.standard_normal(leading + (2,))
    x1, x2 = genesis.from_numpy(first).requires_grad_(), genesis.from_numpy(second).requires_grad_()
    t1, t2 = torch.from_numpy(first).requires_grad_(), torch.from_numpy(second).requires_grad_()
    out, expected = ours(x1, x2), theirs(t1, t2)
    # (an output near 0 is a sum that cancels: its rounding is absolute, not relative)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    for mine, reference in zip([x1, x2, *ours.parameters()], [t1, t2, *theirs.parameters()]):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda a, b: F.bilinear(a, b, ours.weight, ours.bias), (x1, x2))


def test_bilinear_init_and_errors():
    layer = nn.Bilinear(4, 3, 2)
    assert np.abs(layer.weight.detach().numpy()).max() <= 0.5 and layer.weight.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match=r"inputs of shapes \(5, 3\) and \(5, 3\) don't fit a weight"):
        layer(genesis.ones(5, 3), genesis.ones(5, 3))
    with pytest.raises(RuntimeError, match=r"bias has shape \(3,\), expected \(2,\)"):
        F.bilinear(genesis.ones(1, 4), genesis.ones(1, 3), layer.weight, genesis.ones(3))
