"""Activations and normalisers: PyTorch's kink conventions pinned literally, dtype rules, errors,
inplace=True, numerical stability and double backward of the fused gradients."""
import math
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.autograd import gradgradcheck

POINTS = [-3.0, -1.0, 0.0, 1.0, 3.0, 6.0]


def grad_at(function, points=POINTS, **kwargs):
    x = genesis.tensor(points, dtype=genesis.float64, requires_grad=True)
    (grad,) = genesis.autograd.grad(function(x, **kwargs).sum(), [x])
    return grad.tolist()


# -- subgradients at the kinks (values from PyTorch 2.x) ----------------------------------

def test_relu_family_kinks():
    assert grad_at(F.relu) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert grad_at(F.relu6) == [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    assert grad_at(F.leaky_relu, negative_slope=0.1) == [0.1, 0.1, 0.1, 1.0, 1.0, 1.0]
    assert grad_at(F.hardtanh) == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert grad_at(F.hardtanh, min_val=-3.0, max_val=3.0) == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]


def test_exponential_family_at_zero():
    assert grad_at(F.elu, [0.0], alpha=2.0) == [2.0]
    assert grad_at(F.selu, [0.0]) == pytest.approx([1.0507009873554805 * 1.6732632423543772])
    assert grad_at(F.celu, [0.0], alpha=2.0) == [1.0]


def test_hard_sigmoid_and_swish_edges():
    assert grad_at(F.hardsigmoid) == pytest.approx([0.0, 1 / 6, 1 / 6, 1 / 6, 0.0, 0.0])
    assert grad_at(F.hardswish) == pytest.approx([0.0, 1 / 6, 0.5, 5 / 6, 1.0, 1.0])


@pytest.mark.parametrize("function, expected", [
    (F.relu, 1.0), (F.relu6, 1.0), (F.hardtanh, 1.0), (F.elu, 1.0), (F.celu, 1.0),
    (F.selu, 1.0507009873554805), (F.hardswish, 1.0), (F.hardsigmoid, 0.0),
    (lambda t: F.leaky_relu(t, 0.125), 0.125),
], ids=["relu", "relu6", "hardtanh", "elu", "celu", "selu", "hardswish", "hardsigmoid",
        "leaky_relu"])
def test_gradient_at_nan_follows_pytorch(function, expected):
    assert grad_at(function, [math.nan]) == pytest.approx([expected])


def test_softplus_threshold_is_strict():
    x = genesis.tensor([20.0, 21.0], dtype=genesis.float64)
    assert F.softplus(x).tolist() == [20.000000002061153, 21.0]
    assert grad_at(F.softplus, [20.0, 21.0]) == pytest.approx([0.9999999979388464, 1.0], rel=1e-15)
    assert F.softplus(genesis.tensor([10.0, 10.5], dtype=genesis.float64), beta=2).tolist() == [
        10.000000001030577, 10.5]


def test_gelu_values():
    x = genesis.tensor([-1.0, 0.0, 1.0], dtype=genesis.float64)
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-1.0, 0.0, 1.0)]
    assert F.gelu(x).tolist() == pytest.approx([-phi[0], 0.0, phi[2]], rel=1e-15)
    tanh_form = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
    assert F.gelu(x, approximate="tanh").tolist()[2] == pytest.approx(tanh_form, rel=1e-15)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_from_the_kept_part_matches_the_recomputing_one(approximate):
    """The CPU forward keeps Phi(x) (or the tanh) for the backward; the gradient equals, to
    the bit, the one GeluGrad computes from x alone (the create_graph path), on an input
    large enough to be evaluated in blocks."""
    x = genesis.randn(700, 600, requires_grad=True)
    grad = genesis.randn(700, 600)
    y = F.gelu(x, approximate=approximate)
    assert len(y.grad_fn._raw_saved_tensors) == 2 and y.grad_fn._saved_self is x
    (kept,) = genesis.autograd.grad(y, x, grad, retain_graph=True)
    (recomputed,) = genesis.autograd.grad(y, x, grad, create_graph=True)
    assert np.array_equal(kept.numpy(), recomputed.detach().numpy())
    with genesis.no_grad():
        assert np.array_equal(F.gelu(x, approximate=approximate).numpy(), y.detach().numpy())


# -- dtypes and errors -----------------------------------------------------------------------

def test_integer_inputs():
    x = genesis.tensor([-2, 3, 8])
    assert F.relu(x).tolist() == [0, 3, 8] and F.relu(x).dtype is genesis.int64
    assert F.relu6(x).tolist() == [0, 3, 6] and F.relu6(x).dtype is genesis.int64
    assert F.hardtanh(x, -1.5, 1.5).tolist() == [-1, 1, 1]
    with pytest.raises(RuntimeError, match="relu: not supported for bool"):
        F.relu(genesis.tensor([True]))
    for function in (F.gelu, F.silu, F.elu, F.leaky_relu, F.softplus, F.mish, F.hardswish):
        with pytest.raises(RuntimeError, match="needs a floating point tensor, got int64"):
            function(x)


def test_bad_arguments_are_named():
    x = genesis.ones(2)
    with pytest.raises(RuntimeError, match="gelu: approximate must be 'none' or 'tanh', got"):
        F.gelu(x, approximate="fast")
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number, got str"):
        F.leaky_relu(x, negative_slope="0.1")
    with pytest.raises(ValueError, match=r"hardtanh: min_val \(1.0\) cannot be greater"):
        F.hardtanh(x, 1.0, -1.0)
    with pytest.raises(RuntimeError, match="celu: alpha cannot be 0"):
        F.celu(x, alpha=0.0)


def test_functional_namespace_and_methods():
    for name in ("relu", "relu6", "leaky_relu", "hardtanh", "elu", "selu", "celu", "gelu", "silu",
                 "mish", "softplus", "hardsigmoid", "hardswish", "sigmoid", "tanh", "softmax",
                 "log_softmax", "softmin", "logsumexp"):
        assert callable(getattr(F, name)) and callable(getattr(genesis, name)), name
    x = genesis.tensor([-1.0, 2.0])
    assert x.relu().tolist() == [0.0, 2.0] and x.softmax(0).shape == (2,)


# -- inplace=True ---------------------------------------------------------------------------

@pytest.mark.parametrize("function", [F.relu, F.relu6, F.leaky_relu, F.hardtanh, F.elu, F.selu,
                                      F.celu, F.silu, F.mish, F.hardsigmoid, F.hardswish])
def test_inplace_updates_the_input_and_keeps_gradients(function):
    x = genesis.tensor([-1.5, -0.2, 0.4, 2.5], dtype=genesis.float64, requires_grad=True)
    (expected,) = genesis.autograd.grad(function(x * 2).sum(), [x])
    y = x * 2
    out = function(y, inplace=True)
    assert out is y and y._version == 1
    np.testing.assert_allclose(y.detach().numpy(), function(x * 2).detach().numpy())
    (got,) = genesis.autograd.grad(y.sum(), [x])
    np.testing.assert_allclose(got.numpy(), expected.numpy())


def test_inplace_refused_on_a_leaf_that_requires_grad():
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        F.relu(genesis.ones(2, requires_grad=True), inplace=True)
    x = genesis.tensor([-1.0, 2.0])
    assert genesis.relu_(x) is x and x.tolist() == [0.0, 2.0]


# -- softmax family ---------------------------------------------------------------------------

def test_softmax_is_stable_and_normalised():
    x = genesis.tensor([[1000.0, 1000.0, -1000.0], [1.0, 2.0, 3.0]])
    out = x.softmax(dim=1)
    assert out.tolist()[0] == [0.5, 0.5, 0.0]
    np.testing.assert_allclose(out.sum(dim=1).numpy(), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(dim=1).exp().numpy(), out.numpy(), rtol=1e-6)
    assert F.softmin(genesis.tensor([1.0, 2.0]), dim=0).tolist() == pytest.approx(
        [0.7310586, 0.2689414])


def test_infinite_rows_follow_pytorch():
    inf = math.inf
    x = genesis.tensor([[-inf, -inf], [0.0, -inf], [inf, 0.0]], requires_grad=True)
    lse = x.logsumexp(dim=1)
    assert lse.tolist() == [-inf, 0.0, inf]
    (grad,) = genesis.autograd.grad(lse, [x], genesis.ones(3))
    assert grad.tolist()[1] == [1.0, 0.0] and all(math.isnan(v) for v in grad.tolist()[0])
    soft = x.softmax(dim=1).tolist()
    assert soft[1] == [1.0, 0.0] and all(math.isnan(v) for v in soft[0] + soft[2])
    assert x.log_softmax(dim=1).tolist()[1] == [0.0, -inf]


def test_logsumexp_dims_dtypes_and_errors():
    x = genesis.arange(6.0).reshape(2, 3)
    assert x.logsumexp(dim=1, keepdim=True).shape == (2, 1)
    assert x.logsumexp(dim=(0, 1)).shape == ()
    assert genesis.tensor([1, 2]).logsumexp(0).dtype is genesis.float32
    assert genesis.zeros(0, 3).logsumexp(0).tolist() == [-math.inf] * 3
    with pytest.raises(RuntimeError, match="logsumexp: dim must name at least one dimension"):
        x.logsumexp(dim=())
    with pytest.raises(IndexError, match="logsumexp: dim 2 is out of range"):
        x.logsumexp(dim=2)


def test_softmax_dtypes_dims_and_errors():
    with pytest.raises(RuntimeError, match="softmax: needs a floating point tensor, got int64"):
        genesis.tensor([1, 2]).softmax(0)
    out = genesis.tensor([1, 2]).softmax(0, dtype=genesis.float64)
    assert out.dtype is genesis.float64
    half = genesis.tensor([1.0, 2.0], dtype=genesis.float16).softmax(0)
    assert half.dtype is genesis.float16
    np.testing.assert_allclose(half.numpy(), [0.2689, 0.7311], rtol=1e-3)
    assert genesis.tensor(2.0).softmax(0).item() == 1.0
    with pytest.raises(IndexError, match="softmax: dim 2 is out of range"):
        genesis.ones(2, 3).softmax(2)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        assert F.softmax(genesis.ones(2, 4)).tolist() == [[0.25] * 4] * 2


def test_normalisers_make_no_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        genesis.tensor([[-math.inf, -math.inf]]).softmax(1)
        genesis.tensor([[-math.inf, -math.inf]]).log_softmax(1)
        genesis.tensor([[-math.inf, -math.inf]]).logsumexp(1)


# -- double backward --------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda t: F.gelu(t), lambda t: F.gelu(t, approximate="tanh"), F.silu, F.mish, F.softplus,
    lambda t: F.elu(t, alpha=1.5), F.selu, lambda t: F.celu(t, alpha=0.5), F.hardswish,
    lambda t: F.softmax(t, dim=1), lambda t: F.log_softmax(t, dim=0),
    lambda t: t.logsumexp(dim=1), lambda t: F.softmin(t, dim=1), F.leaky_relu,
], ids=["gelu", "gelu_tanh", "silu", "mish", "softplus", "elu", "selu", "celu", "hardswish",
        "softmax", "log_softmax", "logsumexp", "softmin", "leaky_relu"])
def test_double_backward(call):
    rng = np.random.default_rng(0)
    values = rng.uniform(0.2, 1.5, (2, 3)) * rng.choice((-1.0, 1.0), (2, 3))
    x = genesis.tensor(values, dtype=genesis.float64, requires_grad=True)
    assert gradgradcheck(call, (x,))
