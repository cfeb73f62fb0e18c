"""max_unpool, lp_pool, local_response_norm, CrossMapLRN2d and the *_with_indices spellings:
values, gradients and exception types against PyTorch (the functions' gradchecks are the
registry's: genesis.nn._pooling_extras.OPS)."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pair(array):
    torch = torch_or_skip()
    return (genesis.tensor(array, dtype=genesis.float64, requires_grad=True),
            torch.tensor(array, requires_grad=True))


def assert_same(mine, theirs, rtol=1e-10):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name, shape, args", [
    ("max_pool1d_with_indices", (2, 3, 7), (3, 2)),
    ("max_pool2d_with_indices", (2, 2, 5, 5), (3, 2, 1)),
    ("max_pool3d_with_indices", (1, 2, 4, 4, 4), (2,)),
    ("adaptive_max_pool1d_with_indices", (2, 3, 7), (3,)),
    ("adaptive_max_pool2d_with_indices", (2, 2, 5, 7), ((2, 3),)),
    ("adaptive_max_pool3d_with_indices", (1, 2, 3, 5, 4), (2,)),
])
def test_with_indices_spellings_match_pytorch(name, shape, args):
    torch = torch_or_skip()
    mine, theirs = pair(data(shape))
    (values, indices), (their_values, their_indices) = (getattr(F, name)(mine, *args),
                                                          getattr(torch.nn.functional, name)(theirs, *args))
    assert_same(values, their_values)
    np.testing.assert_array_equal(indices.numpy(), their_indices.numpy())


@pytest.mark.parametrize("dims, shape, kwargs", [
    (1, (2, 3, 8), {}), (2, (2, 2, 4, 6), {}), (2, (2, 2, 5, 5), {"output_size": (5, 5)}),
    (2, (1, 1, 5, 5), {"output_size": (1, 1, 5, 5)}), (3, (1, 2, 4, 4, 4), {}),
])
def test_max_pool_then_unpool_matches_pytorch(dims, shape, kwargs):
    torch = torch_or_skip()
    mine, theirs = pair(data(shape))
    pool, unpool = f"MaxPool{dims}d", f"MaxUnpool{dims}d"
    out = getattr(genesis.nn, unpool)(2)(*getattr(genesis.nn, pool)(2, return_indices=True)(mine), **kwargs)
    their = getattr(torch.nn, unpool)(2)(*getattr(torch.nn, pool)(2, return_indices=True)(theirs), **kwargs)
    assert_same(out, their)
    weights = data(tuple(out.shape), 1)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    assert_same(mine.grad, theirs.grad)
    assert repr(getattr(genesis.nn, unpool)(2, 1)) == repr(getattr(torch.nn, unpool)(2, 1))


def test_max_unpool_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    values, indices = F.max_pool2d(genesis.randn(1, 1, 4, 4), 2, return_indices=True)
    their_values, their_indices = torch.nn.functional.max_pool2d(torch.randn(1, 1, 4, 4), 2, return_indices=True)
    for kwargs in ({"output_size": (9, 9)}, {"output_size": (4, 4, 4)}):
        with pytest.raises(ValueError):
            torch.nn.functional.max_unpool2d(their_values, their_indices, 2, **kwargs)
        with pytest.raises(ValueError, match="output_size"):
            F.max_unpool2d(values, indices, 2, **kwargs)
    with pytest.raises(RuntimeError):
        torch.nn.functional.max_unpool2d(their_values, their_indices + 100, 2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(values, indices + 100, 2)


@pytest.mark.parametrize("module, args, shape", [
    ("LPPool1d", (2, 3), (2, 3, 7)), ("LPPool1d", (1.5, 2, 1), (2, 3, 6)),
    ("LPPool2d", (2, 2), (2, 2, 4, 5)), ("LPPool2d", (3, (2, 3), 2, True), (1, 2, 5, 6)),
    ("LPPool2d", (float("inf"), 2), (1, 2, 4, 4)), ("LPPool3d", (2, 2), (1, 2, 4, 4, 4)),
    ("LocalResponseNorm", (3,), (2, 5, 4)), ("LocalResponseNorm", (2, 0.1, 0.5, 2.0), (2, 6, 3, 4)),
    ("LocalResponseNorm", (4,), (1, 5, 2, 3, 2)), ("CrossMapLRN2d", (3,), (2, 7, 3, 2)),
    ("CrossMapLRN2d", (5, 0.5, 0.75, 2.0), (1, 8, 2, 2)), ("CrossMapLRN2d", (2, 1.0), (1, 3, 2, 2)),
])
def test_modules_match_pytorch_values_gradients_and_repr(module, args, shape):
    torch = torch_or_skip()
    array = np.abs(data(shape)) + 0.1 if module.startswith("LP") else data(shape)
    mine, theirs = pair(array)
    ours, their_module = getattr(genesis.nn, module)(*args), getattr(torch.nn, module)(*args)
    out, their = ours(mine), their_module(theirs)
    assert_same(out, their)
    assert repr(ours) == repr(their_module)
    if module == "CrossMapLRN2d":  # PyTorch's backward is not its forward's gradient (see below)
        return
    weights = data(tuple(out.shape), 1)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    assert_same(mine.grad, theirs.grad, rtol=1e-8)


def test_cross_map_lrn_gradient_is_exact_where_pytorchs_is_not():
    """PyTorch's CrossMapLRN2d backward is the symmetric-window formula, which is not the
    gradient of its own forward (torch.autograd.gradcheck fails on it); ours is exact."""
    torch = torch_or_skip()
    x = data((1, 7, 2, 2))
    assert not torch.autograd.gradcheck(torch.nn.CrossMapLRN2d(3), (torch.tensor(x, requires_grad=True),),
                                        raise_exception=False)
    assert genesis.autograd.gradcheck(genesis.nn.CrossMapLRN2d(3),
                                      (genesis.tensor(x, dtype=genesis.float64, requires_grad=True),))


@pytest.mark.parametrize("module, args", [("LocalResponseNorm", (2,)), ("CrossMapLRN2d", (3,))])
def test_lrn_gradients_against_finite_differences(module, args):
    layer = getattr(genesis.nn, module)(*args, alpha=0.5)
    x = genesis.tensor(data((2, 5, 2, 3)), dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(layer, (x,))


def test_lrn_refuses_small_inputs_as_pytorch():
    torch = torch_or_skip()
    with pytest.raises(ValueError):
        torch.nn.functional.local_response_norm(torch.randn(2, 3), 2)
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(genesis.randn(2, 3), 2)
    with pytest.raises(ValueError):
        torch.nn.CrossMapLRN2d(3)(torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match="4D"):
        genesis.nn.CrossMapLRN2d(3)(genesis.randn(2, 3, 4))


@pytest.mark.parametrize("dims, shape, kernel, options", [
    (2, (2, 3, 7, 9), 2, {"output_size": (4, 3)}), (2, (2, 2, 8, 6), (3, 2), {"output_ratio": 0.5}),
    (2, (3, 6, 7), 2, {"output_size": 3}), (3, (1, 2, 6, 5, 7), 2, {"output_size": (3, 2, 4)}),
    (3, (2, 5, 6, 4), (2, 3, 2), {"output_ratio": (0.5, 0.5, 0.7)}),
])
def test_fractional_max_pool_modules_match_pytorch_with_the_same_samples(dims, shape, kernel, options):
    torch = torch_or_skip()
    batch = shape[0] if len(shape) == dims + 2 else 1
    draws = np.random.default_rng(4).uniform(0, 1, (batch, shape[-dims - 1], dims))
    mine, theirs = pair(data(shape))
    name = f"FractionalMaxPool{dims}d"
    ours = getattr(genesis.nn, name)(kernel, return_indices=True, _random_samples=genesis.tensor(draws, dtype=genesis.float64), **options)
    their_module = getattr(torch.nn, name)(kernel, return_indices=True, _random_samples=torch.tensor(draws), **options)
    (out, indices), (their, their_indices) = ours(mine), their_module(theirs)
    assert_same(out, their)
    np.testing.assert_array_equal(indices.numpy(), their_indices.numpy())
    weights = data(tuple(out.shape), 1)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    assert_same(mine.grad, theirs.grad)
    assert repr(ours) == repr(their_module)


def test_fractional_max_pool_draws_from_genesis_generator():
    x = genesis.randn(2, 3, 9, 9)
    genesis.manual_seed(5)
    first = F.fractional_max_pool2d(x, 2, output_size=4)
    genesis.manual_seed(5)
    np.testing.assert_array_equal(first.numpy(), F.fractional_max_pool2d(x, 2, output_size=4).numpy())
    values, indices = F.fractional_max_pool2d_with_indices(x, 2, output_ratio=(0.5, 0.5))
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(
        x.numpy().reshape(2, 3, -1), indices.numpy().reshape(2, 3, -1), -1).reshape(values.shape))


def test_fractional_max_pool_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    for call, error in [(lambda F_, x: F_.fractional_max_pool2d(x, 2), ValueError),
                        (lambda F_, x: F_.fractional_max_pool2d(x, 2, output_size=(7, 3)), RuntimeError)]:
        with pytest.raises(error):
            call(torch.nn.functional, torch.randn(1, 1, 7, 9))
        with pytest.raises(error, match="fractional_max_pool2d"):
            call(F, genesis.randn(1, 1, 7, 9))
    for kwargs in ({}, {"output_size": 2, "output_ratio": 0.5}, {"output_ratio": 1.5}):
        with pytest.raises(ValueError):
            torch.nn.FractionalMaxPool2d(2, **kwargs)
        with pytest.raises(ValueError, match="FractionalMaxPool2d"):
            genesis.nn.FractionalMaxPool2d(2, **kwargs)
