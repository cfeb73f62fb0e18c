"""Pooling: PyTorch's conventions (ties, NaN, -inf with padding, ceil_mode and divisor rules,
adaptive windows, indices), second-order gradients, modules, repr and errors. Values and
gradients on random inputs are in the op registry (tests/ops/test_registry.py)."""
import itertools

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradgradcheck
from tests.helpers import torch_or_skip


def _both(torch, data):
    return (genesis.from_numpy(data.copy()).requires_grad_(),
            torch.from_numpy(data.copy()).requires_grad_())


def _assert_same(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-12)


def _compare_with_gradients(torch, data, ours_call, theirs_call):
    x, tx = _both(torch, data)
    ours, theirs = ours_call(x), theirs_call(tx)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for mine, reference in zip(ours, theirs):
        _assert_same(mine, reference)
    weight = np.arange(1.0, ours[0].numel() + 1).reshape(ours[0].shape)
    ours[0].backward(genesis.from_numpy(weight))
    theirs[0].backward(torch.from_numpy(weight))
    _assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("options", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                     dict(kernel_size=2, stride=1, dilation=2)], ids=str)
def test_max_pool_ties_go_to_the_first_position_like_pytorch(options):
    torch = torch_or_skip()
    data = np.array([[[[1., 1., 2., 2., 0.], [1., 1., 2., 2., 0.], [3., 0., 3., 3., 0.],
                       [0., 3., 3., 3., 1.], [1., 1., 0., 0., 1.]]]])
    _compare_with_gradients(torch, data, lambda x: F.max_pool2d(x, return_indices=True, **options),
                            lambda x: torch.nn.functional.max_pool2d(x, return_indices=True,
                                                                     **options))


def test_max_pool_nan_and_minus_inf_like_pytorch():
    torch = torch_or_skip()
    data = np.array([[[[np.nan, 1., -np.inf, -np.inf], [2., np.nan, -np.inf, -np.inf],
                       [0., 1., 2., 3.], [4., np.nan, 6., 7.]]]])
    for options in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                    dict(kernel_size=2, stride=1, padding=1, ceil_mode=True)):
        x, tx = _both(torch, data)
        ours = F.max_pool2d(x, return_indices=True, **options)
        theirs = torch.nn.functional.max_pool2d(tx, return_indices=True, **options)
        np.testing.assert_array_equal(ours[0].detach().numpy(), theirs[0].detach().numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


def test_max_pool_gradient_with_infinite_upstream_gradient_stays_local():
    x = genesis.tensor([[[1., 5., 2., 0.]]], dtype=genesis.float64, requires_grad=True)
    F.max_pool1d(x, 2).backward(genesis.tensor([[[np.inf, 1.]]], dtype=genesis.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [[[0., np.inf, 1., 0.]]])


def test_pool_output_sizes_and_divisors_match_pytorch_across_geometries(rng):
    torch = torch_or_skip()
    for size, kernel, stride, padding, ceil_mode in itertools.product(
            (5, 6, 7), (2, 3), (1, 2, 3), (0, 1), (False, True)):
        data = rng.standard_normal((1, 2, size, size + 1))
        max_args = (kernel, stride, padding, 1, ceil_mode)
        _compare_with_gradients(torch, data, lambda x: F.max_pool2d(x, *max_args),
                                lambda x: torch.nn.functional.max_pool2d(x, *max_args))
        for count_include_pad in (True, False):
            avg_args = (kernel, stride, padding, ceil_mode, count_include_pad)
            _compare_with_gradients(torch, data, lambda x: F.avg_pool2d(x, *avg_args),
                                    lambda x: torch.nn.functional.avg_pool2d(x, *avg_args))


@pytest.mark.parametrize("size, out", [(7, 3), (5, 4), (10, 3), (4, 4), (6, 1), (3, 5)])
def test_adaptive_windows_match_pytorch(rng, size, out):
    torch = torch_or_skip()
    data = rng.standard_normal((2, 3, size, size + 2))
    for ours, theirs in ((F.adaptive_avg_pool2d, torch.nn.functional.adaptive_avg_pool2d),
                         (F.adaptive_max_pool2d, torch.nn.functional.adaptive_max_pool2d)):
        _compare_with_gradients(torch, data, lambda x: ours(x, (out, None)),
                                lambda x: theirs(x, (out, None)))
    _compare_with_gradients(torch, data, lambda x: F.adaptive_max_pool2d(x, out, True),
                            lambda x: torch.nn.functional.adaptive_max_pool2d(x, out, True))


def test_integer_input_max_pools_without_gradient():
    x = genesis.arange(16).reshape(1, 4, 4)
    np.testing.assert_array_equal(F.max_pool2d(x, 2, padding=1).numpy(),
                                  [[[0, 2, 3], [8, 10, 11], [12, 14, 15]]])


@pytest.mark.parametrize("call", [
    lambda x: F.max_pool2d(x, 3, 2, 1, dilation=(1, 2)),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=5),
    lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
    lambda x: F.adaptive_max_pool1d(x.flatten(-2), 4),
    lambda x: F.avg_pool1d(x.flatten(-2), 4, 3, 2)])
def test_second_order_gradients(rng, call):
    x = genesis.from_numpy(rng.uniform(-1, 1, (2, 2, 5, 6))).requires_grad_()
    assert gradgradcheck(call, (x,), atol=1e-6, rtol=1e-5)


def test_max_pool_nodes_and_its_gradient_as_a_function_of_the_upstream_gradient(rng):
    x = genesis.from_numpy(rng.uniform(-1, 1, (1, 1, 4, 4))).requires_grad_()
    out = F.max_pool2d(x, 2)
    assert type(out.grad_fn).__name__ == "MaxPoolBackward"
    upstream = genesis.ones(1, 1, 2, 2, dtype=genesis.float64, requires_grad=True)
    (grad,) = genesis.autograd.grad(out, x, upstream, create_graph=True)
    assert type(grad.grad_fn).__name__ == "MaxPoolScatterBackward"
    (grad * x).sum().backward()  # d/d upstream of sum(grad * x) = x at each window's maximum
    np.testing.assert_array_equal(upstream.grad.numpy(), out.detach().numpy())


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True),
    lambda nn: nn.MaxPool1d(2, return_indices=True), lambda nn: nn.AvgPool2d(3, 2, 1),
    lambda nn: nn.AvgPool1d(2), lambda nn: nn.AvgPool1d(3, 1, 1),
    lambda nn: nn.AdaptiveAvgPool2d((1, None)), lambda nn: nn.AdaptiveAvgPool1d(3),
    lambda nn: nn.AdaptiveMaxPool2d(3), lambda nn: nn.AdaptiveMaxPool1d(2)])
def test_module_repr_matches_pytorch(make):
    torch = torch_or_skip()
    assert repr(make(nn)) == repr(make(torch.nn))


def test_modules_run_their_functions(rng):
    x = genesis.from_numpy(rng.standard_normal((2, 3, 6, 6)))
    np.testing.assert_array_equal(nn.MaxPool2d(3, 2, 1)(x).numpy(), F.max_pool2d(x, 3, 2, 1).numpy())
    values, indices = nn.MaxPool2d(2, return_indices=True)(x)
    assert values.shape == indices.shape == (2, 3, 3, 3) and indices.dtype == genesis.int64
    np.testing.assert_array_equal(nn.AvgPool2d(2, count_include_pad=False, padding=1)(x).numpy(),
                                  F.avg_pool2d(x, 2, padding=1, count_include_pad=False).numpy())
    assert nn.AdaptiveAvgPool2d(1)(x).shape == (2, 3, 1, 1)
    assert nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x)[1].shape == (2, 3, 2, 3)
    assert nn.MaxPool1d(2)(x.flatten(-2)).shape == (2, 3, 18)
    assert nn.AvgPool1d(4)(x.flatten(-2)).shape == (2, 3, 9)
    assert nn.AdaptiveAvgPool1d(5)(x.flatten(-2)).shape == (2, 3, 5)
    assert nn.AdaptiveMaxPool1d(5)(x.flatten(-2)).shape == (2, 3, 5)


@pytest.mark.parametrize("call, message", [
    (lambda: F.max_pool2d(genesis.ones(1, 1, 4, 4), 2, padding=2),
     r"max_pool2d: padding \(2, 2\) must be at least 0 and at most half of the \(dilated\) "
     r"kernel size \(2, 2\)"),
    (lambda: F.max_pool2d(genesis.ones(1, 1, 2, 2), 3),
     r"max_pool2d: input of shape \(1, 1, 2, 2\) is too small for kernel_size=\(3, 3\), .* "
     r"the output would have size \(0, 0\)"),
    (lambda: F.max_pool2d(genesis.ones(4, 4), 2),
     r"max_pool2d: expected a non-empty 3-D \(unbatched\) or 4-D \(batched\) input of shape "
     r"\(N, C, H, W\), got shape \(4, 4\)"),
    (lambda: F.max_pool1d(genesis.ones(1, 1, 4), 0), r"max_pool1d: kernel_size must be greater "
                                                     r"than zero, got \(0,\)"),
    (lambda: F.avg_pool2d(genesis.ones(1, 1, 4, 4, dtype=genesis.int64), 2),
     r"avg_pool2d: input must be floating point, got int64"),
    (lambda: F.avg_pool2d(genesis.ones(1, 1, 4, 4), 2, divisor_override=0),
     r"avg_pool2d: divisor_override must be a non-zero int"),
    (lambda: F.adaptive_avg_pool2d(genesis.ones(1, 1, 4, 4), (2, 0)),
     r"adaptive_avg_pool2d: output_size must be positive, got \(2, 0\)"),
    (lambda: F.adaptive_max_pool2d(genesis.ones(1, 1, 4, 4), (1, 2, 3)),
     r"adaptive_max_pool2d: output_size must be an int or a tuple of 2 ints"),
    (lambda: F.max_pool2d(genesis.ones(1, 1, 4, 4, dtype=genesis.bool), 2),
     r"max_pool2d: input must be a number tensor, got bool"),
])
def test_errors_name_the_op_and_shapes(call, message):
    with pytest.raises((RuntimeError, TypeError), match=message):
        call()
