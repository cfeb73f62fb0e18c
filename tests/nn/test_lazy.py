"""Lazy modules (LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d,
LazyInstanceNorm*d): they size themselves from the first input, then compute what PyTorch's
do with the same weights copied over (values and gradients)."""
import re

import numpy as np
import pytest

import genesis
from genesis import nn
from tests.helpers import torch_or_skip

CASES = [
    ("LazyLinear", (4,), (2, 5, 3)),
    ("LazyConv1d", (4, 3), (2, 3, 8)),
    ("LazyConv2d", (4, 3), (2, 2, 6, 5)),
    ("LazyConv2d", (4, 3), (2, 6, 5)),
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 3)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3, 2), (2, 2, 4, 3)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 2)),
    ("LazyBatchNorm1d", (), (6, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), (4, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm1d", (1e-5, 0.1, False, False), (2, 3, 5)),
    ("LazyInstanceNorm2d", (1e-5, 0.1, True, True), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (1e-5, 0.1, True), (2, 3, 2, 2, 3)),
]


@pytest.mark.filterwarnings("ignore:input's size at dim=1")  # PyTorch's, at num_features 0
@pytest.mark.parametrize("name, args, shape", CASES, ids=[f"{c[0]}-{len(c[2])}d" for c in CASES])
def test_lazy_module_sizes_itself_and_matches_pytorch(name, args, shape):
    torch = torch_or_skip()
    mine = getattr(nn, name)(*args, dtype=genesis.float64)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64)
    assert mine.has_uninitialized_params() == theirs.has_uninitialized_params()
    assert isinstance(mine, mine.cls_to_become)
    data = np.random.default_rng(0).standard_normal(shape)
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = mine(x)
    assert not mine.has_uninitialized_params()
    theirs(tx)  # materialise theirs, then give it our initial values
    assert type(theirs) is getattr(torch.nn, name).cls_to_become
    mine_state = mine.state_dict()
    # genesis's InstanceNorm keeps no num_batches_tracked (PyTorch's does, and never reads it)
    assert list(mine_state) == [key for key in theirs.state_dict()
                                if "InstanceNorm" not in name or key != "num_batches_tracked"]
    with torch.no_grad():  # our initial values (and running statistics after one batch)
        for key, value in mine_state.items():
            theirs.state_dict()[key].copy_(torch.tensor(value.numpy()))
    expected = theirs(tx)
    out = mine(x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    # genesis's InstanceNorm has no `bias` option, so its repr leaves out "bias=..."
    their_repr = repr(theirs).replace(type(theirs).__name__, "")
    if "InstanceNorm" in name:
        their_repr = re.sub(r"bias=\w+, ", "", their_repr)
    assert repr(mine).replace(name, "") == their_repr
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (key, param), (_, their_param) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(param.grad.numpy(), their_param.grad.numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=key)


def test_lazy_linear_draws_weights_in_the_linear_range():
    layer = nn.LazyLinear(50)
    weight = layer.weight
    assert isinstance(weight, nn.UninitializedParameter) and nn.parameter.is_lazy(weight)
    layer(genesis.ones(1, 16))
    assert layer.weight is weight and not nn.parameter.is_lazy(weight)
    assert weight.shape == (50, 16) and weight.requires_grad
    assert 0 < layer.weight.abs().max().item() <= 0.25 and layer.bias.abs().max().item() <= 0.25
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]


def test_lazy_modules_keep_dtype_after_to_and_follow_their_input_size():
    layer = nn.LazyConv1d(3, 2, bias=False).double()
    layer(genesis.ones(1, 5, 4, dtype=genesis.float64))
    assert layer.weight.dtype == genesis.float64 and layer.bias is None and layer.in_channels == 5
    norm = nn.LazyBatchNorm1d(affine=False)
    norm(genesis.randn(3, 7))
    assert norm.weight is None and norm.running_mean.shape == (7,)
    norm = nn.LazyInstanceNorm2d().double()  # the buffer placeholders become plain tensors
    assert norm.has_uninitialized_params()
    norm(genesis.randn(2, 3, 4, 4, dtype=genesis.float64))
    assert norm.running_var.dtype == genesis.float64 and norm.running_var.shape == (3,)
    assert norm.weight.dtype == genesis.float64 and not norm.has_uninitialized_params()


def test_lazy_conv_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    for library in (nn, torch.nn):
        tensor = genesis.ones if library is nn else torch.ones
        with pytest.raises(RuntimeError):
            library.LazyConv2d(2, 3)(tensor(1, 4, 5, 5, 5))
        with pytest.raises(ValueError):
            library.LazyConv2d(2, 3, groups=2)(tensor(1, 3, 5, 5))


def test_an_optimizer_built_before_the_first_forward_trains_the_materialised_weights():
    model = nn.Sequential(nn.LazyLinear(3), nn.Tanh(), nn.LazyLinear(1))
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    x = genesis.randn(8, 5)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[2] < losses[0]
    assert all(param.grad is not None for param in model.parameters())


def test_placeholders_materialize_in_place_with_their_dtype():
    for placeholder in (nn.UninitializedBuffer(dtype=genesis.float64),
                        nn.UninitializedParameter(dtype=genesis.float64)):
        assert repr(placeholder).startswith("<Uninitialized")
        placeholder.materialize((2, 3))
        assert placeholder.shape == (2, 3) and placeholder.dtype == genesis.float64
        assert not nn.parameter.is_lazy(placeholder)


def test_loading_a_state_dict_before_the_first_forward_sizes_the_layers():
    torch = torch_or_skip()
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, groups=1), torch.nn.BatchNorm2d(4),
                                 torch.nn.Flatten(), torch.nn.Linear(16, 2)).double()
    mine = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.Flatten(), nn.LazyLinear(2))
    mine.double()
    mine.load_state_dict({key: genesis.tensor(value.numpy()) for key, value in theirs.state_dict().items()})
    assert (mine[0].in_channels, mine[1].num_features, mine[3].in_features) == (3, 4, 16)
    assert not any(layer.has_uninitialized_params() for layer in (mine[0], mine[1], mine[3]))
    mine.eval()
    theirs.eval()
    data = np.random.default_rng(2).standard_normal((2, 3, 4, 4))
    np.testing.assert_allclose(mine(genesis.tensor(data, dtype=genesis.float64)).detach().numpy(),
                               theirs(torch.tensor(data)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_lazy_transposed_conv_reads_in_channels_from_a_loaded_weight():
    source = nn.ConvTranspose1d(6, 4, 3, groups=2)
    lazy = nn.LazyConvTranspose1d(4, 3, groups=2)
    lazy.load_state_dict(source.state_dict())
    assert lazy.in_channels == 6 and lazy.weight.shape == (6, 2, 3)
    x = genesis.randn(1, 6, 5)
    np.testing.assert_allclose(lazy(x).detach().numpy(), source(x).detach().numpy())
