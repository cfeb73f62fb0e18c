"""Unary math and rounding: erf accuracy, dtype rules, kink conventions,
silent inf/nan, in-place variants and double backward."""
import math
import warnings

import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck
from genesis.ops._erf import erf_array


def leaf(values, dtype=genesis.float64):
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


def grad_of(output, x):
    (grad,) = genesis.autograd.grad(output.sum(), [x])
    return grad.tolist()


# -- erf ---------------------------------------------------------------------------------

def test_erf_matches_math_erf_to_double_precision():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-300, 1.5, 2000),
                        -np.logspace(-300, 1.5, 2000), [0.46875, 0.5, 4.0, 26.0, 1e300]])
    expected = np.array([math.erf(v) for v in x])
    got = erf_array(np, x)
    relative = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)
    assert relative.max() < 1e-15


def test_erf_float32_is_within_half_a_millionth_and_keeps_signs_and_specials():
    x = np.concatenate([np.linspace(-6, 6, 200001), np.logspace(-40, 1, 2000),
                        -np.logspace(-40, 1, 2000)]).astype(np.float32)
    expected = np.array([math.erf(v) for v in x.astype(np.float64)])
    got = erf_array(np, x)
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() < 5e-7
    assert np.all(np.sign(got) == np.sign(x))
    special = erf_array(np, np.array([-0.0, math.inf, -math.inf, math.nan], np.float32))
    assert special[:3].tolist() == [-0.0, 1.0, -1.0] and math.isnan(special[3])
    assert math.copysign(1, special[0]) == -1


def test_erf_special_values_and_dtypes():
    x = genesis.tensor([0.0, -0.0, math.inf, -math.inf, math.nan], dtype=genesis.float64)
    values = x.erf().tolist()
    assert values[:4] == [0.0, -0.0, 1.0, -1.0] and math.isnan(values[4])
    assert math.copysign(1, values[1]) == -1
    for dtype in (genesis.float16, genesis.float32):
        out = genesis.tensor([0.5, -2.0], dtype=dtype).erf()
        assert out.dtype is dtype
        np.testing.assert_allclose(out.numpy(), [math.erf(0.5), math.erf(-2.0)], rtol=1e-3)


def test_erf_gradient():
    x = leaf([0.0, 1.0])
    slope = 2 / math.sqrt(math.pi)
    assert grad_of(x.erf(), x) == pytest.approx([slope, slope / math.e])


# -- dtype rules ---------------------------------------------------------------------------

def test_integer_and_bool_inputs_to_float_math_give_float32():
    assert genesis.tensor([4, 9]).sqrt().tolist() == [2.0, 3.0]
    assert genesis.tensor([4, 9]).sqrt().dtype is genesis.float32
    assert genesis.tensor([True, False]).exp().dtype is genesis.float32
    assert genesis.tensor([1, 2], dtype=genesis.int16).reciprocal().tolist() == [1.0, 0.5]


def test_ops_that_keep_integers():
    x = genesis.tensor([-3, 0, 2])
    assert x.abs().tolist() == [3, 0, 2] and x.abs().dtype is genesis.int64
    assert x.sign().tolist() == [-1, 0, 1] and x.square().tolist() == [9, 0, 4]
    mask = genesis.tensor([True, False])
    assert mask.sign().dtype is genesis.bool and mask.square().tolist() == [1, 0]
    with pytest.raises(RuntimeError, match="abs: not supported for bool"):
        mask.abs()


def test_float16_stays_float16():
    x = genesis.tensor([0.5, 2.0], dtype=genesis.float16)
    for name in ("exp", "log", "sqrt", "sin", "sigmoid", "tanh", "rsqrt", "atan"):
        assert getattr(x, name)().dtype is genesis.float16, name


# -- conventions ---------------------------------------------------------------------------

def test_abs_and_sign_subgradients_at_zero():
    x = leaf([-2.0, 0.0, 3.0])
    assert grad_of(x.abs(), x) == [-1.0, 0.0, 1.0]
    assert grad_of(x.sign(), x) == [0.0, 0.0, 0.0]
    assert abs(x).tolist() == [2.0, 0.0, 3.0]


def test_sign_and_abs_at_nan_follow_pytorch():
    x = leaf([math.nan, -0.0])
    assert x.sign().tolist() == [0.0, 0.0]
    assert grad_of(x.abs(), x) == [0.0, 0.0]


def test_poles_give_pytorch_infinities():
    x = leaf([0.0, 4.0])
    assert grad_of(x.sqrt(), x) == [math.inf, 0.25]
    assert grad_of(x.rsqrt(), x) == [-math.inf, -0.0625]
    assert grad_of(x.log(), x) == [math.inf, 0.25]


def test_inf_and_nan_results_come_without_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert genesis.tensor([0.0]).log().item() == -math.inf
        assert math.isnan(genesis.tensor([-1.0]).sqrt().item())
        assert genesis.tensor([1000.0]).exp().item() == math.inf
        assert genesis.tensor([0.0]).reciprocal().item() == math.inf
        assert math.isnan(genesis.tensor([2.0]).asin().item())
        assert genesis.tensor([-1000.0]).sigmoid().item() == 0.0
        assert genesis.tensor([1.0]).atanh().item() == math.inf


def test_sigmoid_tails_are_accurate():
    x = genesis.tensor([-40.0, 40.0], dtype=genesis.float64)
    assert x.sigmoid().tolist() == pytest.approx([math.exp(-40) / (1 + math.exp(-40)), 1.0],
                                                 rel=1e-15)


# -- in place ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sigmoid", "tanh", "abs", "erf", "sin",
                                  "rsqrt", "reciprocal", "square", "expm1", "log1p", "sign"])
def test_in_place_matches_out_of_place(name):
    x = genesis.tensor([0.5, 1.5, 3.0])
    expected = getattr(x, name)().tolist()
    target = x.clone()
    assert getattr(target, f"{name}_")() is target
    assert target.tolist() == pytest.approx(expected, rel=1e-6) and target._version == 1


@pytest.mark.parametrize("name", ["exp", "sqrt", "sigmoid", "tanh", "abs", "log", "erf"])
def test_in_place_on_non_leaf_gives_right_gradients(name):
    x = leaf([0.5, 1.5])
    expected = grad_of(getattr(x * 2, name)(), x)
    y = x * 2
    getattr(y, f"{name}_")()
    assert grad_of(y, x) == pytest.approx(expected)


def test_in_place_float_math_on_integers_is_refused_and_leaves_the_tensor_intact():
    x = genesis.tensor([1, 2])
    for name in ("sqrt_", "sigmoid_", "exp_"):
        with pytest.raises(RuntimeError, match=f"{name[:-1]}_: can't update .* int64 in place"):
            getattr(x, name)()
        assert x.tolist() == [1, 2]


# -- double backward -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tanh", "sigmoid", "erf", "exp", "log", "sqrt", "rsqrt",
                                  "reciprocal", "sin", "tan", "asin", "atan", "sinh", "expm1"])
def test_double_backward(name):
    x = leaf(np.random.default_rng(0).uniform(0.2, 0.8, (4,)))
    assert gradgradcheck(lambda t: getattr(t, name)(), (x,))


# -- rounding ------------------------------------------------------------------------------

def test_round_half_to_even_and_decimals():
    halves = genesis.tensor([0.5, 1.5, 2.5, -0.5, -1.5])
    assert halves.round().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    x = genesis.tensor([1.2345, 2.5551, -1.005], dtype=genesis.float64)
    assert x.round(decimals=2).tolist() == [1.23, 2.56, -1.0]
    assert genesis.tensor([1234.5, 2550.0], dtype=genesis.float64).round(decimals=-2).tolist() == [
        1200.0, 2600.0]


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_has_zero_gradient_and_keeps_integers(name):
    x = leaf([-1.5, 0.3, 2.7])
    assert grad_of(getattr(x, name)(), x) == [0.0, 0.0, 0.0]
    integers = genesis.tensor([-3, 4])
    result = getattr(integers, name)()
    assert result.tolist() == [-3, 4] and result.dtype is genesis.int64
    assert result._data is not integers._data
    with pytest.raises(RuntimeError, match=f"{name}: not supported for bool"):
        getattr(genesis.tensor([True]), name)()


def test_frac_values_gradient_and_errors():
    x = leaf([-1.25, 2.5])
    assert x.frac().tolist() == [-0.25, 0.5] and grad_of(x.frac(), x) == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="frac: needs a floating point tensor, got int64"):
        genesis.tensor([1]).frac()
    with pytest.raises(RuntimeError, match="round: decimals=1 needs a floating point tensor"):
        genesis.tensor([1]).round(decimals=1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_fake_quantize_values_and_straight_through_gradient_match_pytorch(dtype):
    """QAT code calls torch.fake_quantize_per_{tensor,channel}_affine: values with PyTorch's
    float32 arithmetic (rounding ties included), the gradient 1 inside the range and 0 where
    clamped; scale and zero point as numbers or tensors (int or float zero points)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(scale=3.0, size=(4, 6))
    x[0, :3] = [0.25, -0.75, 0.35]  # ties at scale 0.5 and 0.1
    calls = [
        lambda lib, v: lib.fake_quantize_per_tensor_affine(v, 0.1, 3, -20, 20),
        lambda lib, v: lib.fake_quantize_per_tensor_affine(v, 0.5, 0, -8, 7),
        lambda lib, v: lib.fake_quantize_per_tensor_affine(
            v, lib.tensor(0.25), lib.tensor(2, dtype=lib.int32), 0, 15),
        lambda lib, v: lib.fake_quantize_per_channel_affine(
            v, lib.tensor([0.5, 0.1, 1.0, 0.3]), lib.tensor([0, 1, -2, 3], dtype=lib.int32), 0, -8, 7),
        lambda lib, v: lib.fake_quantize_per_channel_affine(
            v, lib.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), lib.tensor([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
            1, -8, 7),
    ]
    for call in calls:
        mine = genesis.tensor(x, dtype=getattr(genesis, dtype), requires_grad=True)
        theirs = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        ours, reference = call(genesis, mine), call(torch, theirs)
        assert ours.dtype is mine.dtype
        np.testing.assert_array_equal(ours.detach().numpy(), reference.detach().numpy())
        weight = np.arange(x.size, dtype=np.float64).reshape(x.shape)
        ours.backward(genesis.tensor(weight, dtype=ours.dtype))
        reference.backward(torch.tensor(weight, dtype=reference.dtype))
        np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())
        assert 0 < (mine.grad.numpy() == 0).sum() < x.size - 1  # some clamped, some inside


def test_fake_quantize_refuses_what_pytorch_refuses():
    x = genesis.ones(2, 3)
    with pytest.raises(RuntimeError, match="zero_point must be between"):
        genesis.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255)
    with pytest.raises(RuntimeError, match="1-D with 3 values"):
        genesis.fake_quantize_per_channel_affine(x, genesis.ones(2), genesis.zeros(2), 1, 0, 255)
    with pytest.raises(RuntimeError, match="axis must be between 0 and 1"):
        genesis.fake_quantize_per_channel_affine(x, genesis.ones(3), genesis.zeros(3), -1, 0, 255)
    with pytest.raises(RuntimeError, match="floating point input"):
        genesis.fake_quantize_per_tensor_affine(genesis.ones(2, dtype=genesis.int64), 0.1, 0, 0, 255)


def test_rounding_in_place():
    x = genesis.tensor([-1.5, 2.7])
    assert x.floor_() is x and x.tolist() == [-2.0, 2.0]
    y = genesis.tensor([1.2345])
    assert y.round_(decimals=2).tolist() == pytest.approx([1.23])
