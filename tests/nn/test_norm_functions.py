"""The fused nodes of layer_norm and training-mode batch_norm: same forward as the composed
ops, plain and recorded backwards that agree, exact double backward, PyTorch's values and
gradients."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip

CASES = [((3, 5), (5,), True, True), ((2, 3, 4, 5), (4, 5), True, True),
         ((3, 5), (5,), True, False), ((3, 5), (5,), False, True), ((3, 5), (5,), False, False),
         ((4,), (4,), True, True)]  # the last normalises over every dim
IDS = ["affine", "two_dims", "weight_only", "bias_only", "plain", "all_dims"]


def _inputs(shape, normalized_shape, has_weight, has_bias, dtype=np.float64):
    rng = np.random.default_rng(0)
    x = genesis.from_numpy((rng.standard_normal(shape) * 3 + 1).astype(dtype)).requires_grad_()
    weight = genesis.from_numpy(rng.uniform(0.5, 1.5, normalized_shape).astype(dtype)) \
        .requires_grad_() if has_weight else None
    bias = genesis.from_numpy(rng.standard_normal(normalized_shape).astype(dtype)) \
        .requires_grad_() if has_bias else None
    return x, weight, bias


@pytest.mark.parametrize("shape, normalized_shape, has_weight, has_bias", CASES, ids=IDS)
def test_forward_is_the_composed_formula_bit_for_bit(shape, normalized_shape, has_weight, has_bias):
    x, weight, bias = _inputs(shape, normalized_shape, has_weight, has_bias, np.float32)
    dims = tuple(range(len(shape) - len(normalized_shape), len(shape)))
    with genesis.no_grad():
        centered = x - x.mean(dims, keepdim=True)
        expected = centered * genesis.rsqrt((centered * centered).mean(dims, keepdim=True) + 1e-5)
        expected = expected * weight if weight is not None else expected
        expected = expected + bias if bias is not None else expected
    out = F.layer_norm(x, normalized_shape, weight, bias)
    assert out.dtype is genesis.float32 and out.grad_fn is not None
    np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())


@pytest.mark.parametrize("shape, normalized_shape, has_weight, has_bias", CASES, ids=IDS)
def test_plain_and_recorded_backward_agree_and_double_backward_is_exact(
        shape, normalized_shape, has_weight, has_bias):
    x, weight, bias = _inputs(shape, normalized_shape, has_weight, has_bias)
    inputs = [t for t in (x, weight, bias) if t is not None]
    upstream = genesis.from_numpy(np.random.default_rng(1).standard_normal(shape))

    def gradients(create_graph):
        out = F.layer_norm(x, normalized_shape, weight, bias)
        return genesis.autograd.grad(out, inputs, upstream, create_graph=create_graph)

    plain_grads, recorded_grads = gradients(False), gradients(True)
    assert recorded_grads[0].grad_fn is not None  # the input's gradient depends on the input
    for plain, recorded in zip(plain_grads, recorded_grads):
        assert plain.grad_fn is None
        np.testing.assert_allclose(plain.numpy(), recorded.detach().numpy(), rtol=1e-12, atol=1e-12)

    def call(*args):
        values = iter(args)
        return F.layer_norm(next(values), normalized_shape, next(values) if has_weight else None,
                            next(values) if has_bias else None)

    assert gradcheck(call, tuple(inputs), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(call, tuple(inputs), atol=1e-6, rtol=1e-5)


def test_float32_transformer_sized_values_and_gradients_match_pytorch():
    torch = torch_or_skip()
    x, weight, bias = _inputs((8, 16, 256), (256,), True, True, np.float32)
    upstream = np.random.default_rng(1).standard_normal((8, 16, 256)).astype(np.float32)
    out = F.layer_norm(x, (256,), weight, bias)
    out.backward(genesis.from_numpy(upstream))
    tx, tw, tb = (torch.from_numpy(t.detach().numpy().copy()).requires_grad_() for t in (x, weight, bias))
    reference = torch.nn.functional.layer_norm(tx, (256,), tw, tb)
    reference.backward(torch.from_numpy(upstream))
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-5, atol=1e-5)
    for mine, theirs in ((x, tx), (weight, tw), (bias, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_changing_the_output_in_place_before_backward_keeps_the_gradient_right():
    # no affine part: the output is the normalised input, and backward must not rely on it
    # (PyTorch allows the change: ReLU(inplace=True) after InstanceNorm2d is common)
    torch = torch_or_skip()
    data = np.random.default_rng(0).normal(size=(3, 4))
    grads = []
    for library, functional in ((torch, torch.nn.functional), (genesis, F)):
        x = library.tensor(data, dtype=library.float64, requires_grad=True)
        out = functional.layer_norm(x, (4,))
        out.mul_(library.tensor([1.0, 2.0, 3.0, 4.0], dtype=library.float64))
        out.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


def test_integer_input_is_refused_by_name():
    with pytest.raises(RuntimeError, match="layer_norm: needs a floating point input, got int64"):
        F.layer_norm(genesis.tensor([[1, 2]]), (2,))
    with pytest.raises(RuntimeError, match="batch_norm: needs a floating point input, got int64"):
        F.batch_norm(genesis.tensor([[1, 2], [3, 4]]), None, None, training=True)


# -- batch_norm (training): normalised over every dim but the channel --------------------------
BATCH_CASES = [((6, 3), True, True), ((4, 3, 5), True, True), ((2, 3, 4, 4), True, False),
               ((2, 3, 2, 2, 2), False, True), ((5, 3), False, False)]
BATCH_IDS = ["1d", "1d_sequence", "2d_weight_only", "3d_bias_only", "plain"]


def _batch_inputs(shape, has_weight, has_bias, dtype=np.float64):
    rng = np.random.default_rng(0)
    x = genesis.from_numpy((rng.standard_normal(shape) * 3 + 1).astype(dtype)).requires_grad_()
    weight = genesis.from_numpy(rng.uniform(0.5, 1.5, shape[1]).astype(dtype)).requires_grad_() \
        if has_weight else None
    bias = genesis.from_numpy(rng.standard_normal(shape[1]).astype(dtype)).requires_grad_() \
        if has_bias else None
    return x, weight, bias


def _batch_norm(x, weight, bias, running=None):
    return F.batch_norm(x, *(running or (None, None)), weight, bias, training=True)


@pytest.mark.parametrize("shape, has_weight, has_bias", BATCH_CASES, ids=BATCH_IDS)
def test_batch_norm_forward_is_the_composed_formula_bit_for_bit(shape, has_weight, has_bias):
    x, weight, bias = _batch_inputs(shape, has_weight, has_bias, np.float32)
    dims = (0,) + tuple(range(2, len(shape)))
    channel = (shape[1],) + (1,) * (len(shape) - 2)
    with genesis.no_grad():
        centered = x - x.mean(dims, keepdim=True)
        expected = centered * genesis.rsqrt((centered * centered).mean(dims, keepdim=True) + 1e-5)
        expected = expected * weight.reshape(channel) if weight is not None else expected
        expected = expected + bias.reshape(channel) if bias is not None else expected
    out = _batch_norm(x, weight, bias)
    assert out.dtype is genesis.float32 and out.grad_fn.name() == "BatchNormBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())


@pytest.mark.parametrize("shape, has_weight, has_bias", BATCH_CASES, ids=BATCH_IDS)
def test_batch_norm_plain_and_recorded_backward_agree_and_double_backward_is_exact(
        shape, has_weight, has_bias):
    x, weight, bias = _batch_inputs(shape, has_weight, has_bias)
    inputs = [t for t in (x, weight, bias) if t is not None]
    upstream = genesis.from_numpy(np.random.default_rng(1).standard_normal(shape))

    def gradients(create_graph):
        out = _batch_norm(x, weight, bias)
        return genesis.autograd.grad(out, inputs, upstream, create_graph=create_graph)

    for plain, recorded in zip(gradients(False), gradients(True)):
        assert plain.grad_fn is None and plain.shape == recorded.shape
        np.testing.assert_allclose(plain.numpy(), recorded.detach().numpy(), rtol=1e-12, atol=1e-12)

    def call(*args):
        values = iter(args)
        return _batch_norm(next(values), next(values) if has_weight else None,
                           next(values) if has_bias else None)

    assert gradcheck(call, tuple(inputs), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(call, tuple(inputs), atol=1e-6, rtol=1e-5)


def test_batch_norm_is_one_node_and_its_statistics_get_no_gradient():
    x, weight, bias = _batch_inputs((4, 3, 5), True, True)
    running_mean, running_var = genesis.zeros(3, dtype=genesis.float64), genesis.ones(3, dtype=genesis.float64)
    out = _batch_norm(x, weight, bias, (running_mean, running_var))
    node = out.grad_fn
    assert node.name() == "BatchNormBackward0"
    assert [child.name() for child, _ in node.next_functions if child is not None] == \
        ["torch::autograd::AccumulateGrad"] * 3  # the input, weight and bias, as in PyTorch
    assert not running_mean.requires_grad and running_mean.grad_fn is None
    data = x.detach().numpy()
    np.testing.assert_allclose(running_mean.numpy(), 0.1 * data.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(running_var.numpy(), 0.9 + 0.1 * data.var(axis=(0, 2), ddof=1),
                               rtol=1e-12)
    out.sum().backward()
    assert x.grad.shape == x.shape and weight.grad.shape == (3,) and bias.grad.shape == (3,)
