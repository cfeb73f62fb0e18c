"""Plain backward (no create_graph) computes some gradients straight on the arrays, without
intermediate nodes; it must agree exactly with the recorded (create_graph) path."""
import math

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.ops._select import kept_bits


def _gradients(function, arrays, create_graph):
    inputs = [genesis.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = function(*inputs)
    grads = genesis.autograd.grad(out, inputs, genesis.ones_like(out), create_graph=create_graph)
    return [g.detach().numpy() for g in grads]


@pytest.mark.parametrize("function", [
    lambda a, b: a * b, lambda a, b: (a * 3) * b, lambda a, b: a.tanh() * b,
    lambda a, b: a.sigmoid() + b, lambda a, b: F.relu(a) * b, lambda a, b: a.sum() * b,
    lambda a, b: a.mean(1, keepdim=True) * b, lambda a, b: a.mean() + b.sum(0),
    lambda a, b: a * a + a * b,  # a reaches its leaf twice: the two gradients are added
    lambda a, b: a.clamp(-0.5, 0.5) + b.maximum(a),
], ids=["mul", "mul_scalar", "tanh", "sigmoid", "relu", "sum", "mean_dim", "mean_all",
        "shared_input", "clamp_maximum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_backward_matches_the_recorded_one(function, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 5)).astype(dtype) for _ in range(2)]
    plain = _gradients(function, arrays, create_graph=False)
    recorded = _gradients(function, arrays, create_graph=True)
    for mine, reference in zip(plain, recorded):
        assert mine.dtype == dtype
        np.testing.assert_array_equal(mine, reference)


def test_plain_backward_records_no_nodes():
    x = genesis.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (grad,) = genesis.autograd.grad((F.relu(x).tanh() * x).mean(), x)
    assert grad.grad_fn is None and not grad.requires_grad


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_kept_bits_is_an_exact_zero_where_masked_even_for_inf_and_nan(dtype):
    values = np.array([1.5, -math.inf, math.nan, math.inf, -0.0, 2.0], dtype)
    keep = np.array([True, False, False, True, True, False])
    out = kept_bits(values, keep)
    assert out.dtype == dtype
    assert out[[1, 2, 5]].tolist() == [0.0, 0.0, 0.0]
    assert all(math.copysign(1, v) == 1 for v in out[[1, 2, 5]])
    assert out[0] == 1.5 and out[3] == math.inf and math.copysign(1, out[4]) == -1


def test_relu_gradient_passes_nan_inputs_and_blocks_inf_gradients_where_negative():
    x = genesis.tensor([math.nan, -1.0, 2.0, -3.0], requires_grad=True)
    F.relu(x).backward(genesis.tensor([5.0, math.inf, math.nan, math.nan]))
    values = x.grad.tolist()
    assert values[0] == 5.0 and values[1] == 0.0 and math.isnan(values[2]) and values[3] == 0.0


def test_summing_gradients_in_place_never_changes_a_gradient_another_tensor_holds():
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    b = genesis.tensor([3.0, 4.0], requires_grad=True)
    ((a + b).sum() + (a * 3).sum()).backward()  # add's backward hands one tensor to a and b
    assert a.grad.tolist() == [4.0, 4.0] and b.grad.tolist() == [1.0, 1.0]

    kept = genesis.tensor([10.0, 10.0])

    class ConstantGrad(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            return x._data * 1

        @staticmethod
        def backward(ctx, grad):
            return kept  # a tensor the caller still holds

    x = genesis.tensor([0.0, 0.0], requires_grad=True)
    (ConstantGrad.apply(x).sum() + (x * 2).sum()).backward()
    assert x.grad.tolist() == [12.0, 12.0] and kept.tolist() == [10.0, 10.0]


def test_a_leaf_used_twice_gets_the_summed_buffer_without_a_copy(monkeypatch):
    copies = []
    original = genesis.autograd.engine._fresh_copy
    monkeypatch.setattr(genesis.autograd.engine, "_fresh_copy",
                        lambda gradient: copies.append(1) or original(gradient))
    x = genesis.randn(4, 3, requires_grad=True)
    ((x * 2).tanh() * x).sum().backward()
    assert copies == []
    expected = np.tanh(2 * x.detach().numpy())
    expected = expected + x.detach().numpy() * (1 - expected ** 2) * 2
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
