"""Arithmetic semantics the registry can't express: rounding modes, sign conventions, pow edge
cases, bool rules, errors, in-place variants and double backward."""
import math

import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck


def leaf(values, dtype=genesis.float64):
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


def grads_of(output, *leaves):
    return [g.tolist() for g in genesis.autograd.grad(output.sum(), leaves)]


# -- division ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, expected", [("trunc", [1.0, -2.0, -2.0, 2.0]),
                                            ("floor", [1.0, -3.0, -3.0, 2.0])])
def test_rounded_division_values_and_zero_gradient(mode, expected):
    a, b = leaf([3.5, -5.0, 5.0, -7.0]), leaf([2.0, 2.0, -2.0, -3.0])
    out = genesis.div(a, b, rounding_mode=mode)
    assert out.tolist() == expected
    assert out.requires_grad  # PyTorch: differentiable, with a zero gradient
    assert grads_of(out, a, b) == [[0.0] * 4, [0.0] * 4]


@pytest.mark.parametrize("mode, expected", [("trunc", [2, -2, -2, 2, 0]),
                                            ("floor", [2, -3, -3, 2, -1])])
def test_rounded_division_of_integers_stays_integer(mode, expected):
    out = genesis.div(genesis.tensor([7, -7, 7, -7, -1]), genesis.tensor([3, 3, -3, -3, 3]),
                      rounding_mode=mode)
    assert out.dtype is genesis.int64 and out.tolist() == expected


def test_integer_division_by_zero_is_an_error():
    x = genesis.tensor([5, -5])
    for call in (lambda: x // 0, lambda: x % 0, lambda: genesis.fmod(x, genesis.tensor([1, 0])),
                 lambda: genesis.div(x, 0, rounding_mode="trunc")):
        with pytest.raises(RuntimeError, match="integer division by zero"):
            call()


def test_float_division_by_zero_gives_inf_and_nan_silently():
    x = genesis.tensor([1.0, -1.0, 0.0])
    assert (x / 0).tolist()[:2] == [math.inf, -math.inf] and math.isnan((x / 0).tolist()[2])
    assert (x // 0).tolist()[:2] == [math.inf, -math.inf]
    assert all(math.isnan(v) for v in (x % 0).tolist())


def test_bad_rounding_mode_is_named():
    with pytest.raises(RuntimeError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        genesis.div(genesis.ones(2), 2, rounding_mode="round")


def test_floor_divide_values_and_no_derivative():
    a = leaf([7.0, -7.0])
    out = a // 2
    assert out.tolist() == [3.0, -4.0] and (7 // genesis.tensor([2, -2])).tolist() == [3, -4]
    with pytest.raises(RuntimeError, match="derivative of floor_divide.*rounding_mode='floor'"):
        out.sum().backward()


def test_remainder_takes_the_sign_of_the_divisor_and_fmod_of_the_dividend():
    a, b = genesis.tensor([5.0, -5.0, 5.0, -5.0]), genesis.tensor([3.0, 3.0, -3.0, -3.0])
    assert (a % b).tolist() == [2.0, 1.0, -1.0, -2.0]
    assert genesis.fmod(a, b).tolist() == [2.0, -2.0, 2.0, -2.0]
    assert (genesis.tensor([5, -5]) % 3).tolist() == [2, 1]
    assert (5 % genesis.tensor([3.0, -3.0])).tolist() == [2.0, -1.0]


def test_remainder_and_fmod_gradients():
    a, b = leaf([5.0, -5.0]), leaf([3.0, 3.0])
    assert grads_of(a % b, a, b) == [[1.0, 1.0], [-1.0, 2.0]]  # d/db = -floor(a / b)
    assert grads_of(genesis.fmod(a, b), a, b) == [[1.0, 1.0], [-1.0, 1.0]]  # -trunc(a / b)


def test_bool_remainder_and_floor_division_are_refused():
    mask = genesis.tensor([True, False])
    with pytest.raises(RuntimeError, match="remainder: not supported for bool"):
        mask % mask
    with pytest.raises(RuntimeError, match="floor_divide: not supported for bool"):
        mask // mask


# -- pow -----------------------------------------------------------------------------------

def test_zero_to_the_zero_is_one_with_zero_gradients():
    base, exponent = leaf([0.0, 0.0, 2.0]), leaf([0.0, 2.0, 0.0])
    out = base ** exponent
    assert out.tolist() == [1.0, 0.0, 1.0]
    grad_base, grad_exponent = grads_of(out, base, exponent)
    assert grad_base == [0.0, 0.0, 0.0]
    assert grad_exponent == pytest.approx([0.0, 0.0, math.log(2.0)])


def test_pow_by_scalar_zero_has_zero_gradient_everywhere():
    x = leaf([0.0, -2.0, 3.0])
    assert grads_of(x ** 0, x) == [[0.0, 0.0, 0.0]]


def test_pow_gradient_conventions_match_pytorch():
    base, exponent = leaf([-2.0, 0.0]), leaf([3.0, -1.0])
    grad_base, grad_exponent = grads_of(base ** exponent, base, exponent)
    assert grad_base == [12.0, -math.inf]
    assert math.isnan(grad_exponent[0]) and grad_exponent[1] == -math.inf
    x = leaf([0.0, 1.0])
    assert grads_of(x ** 0.5, x) == [[math.inf, 0.5]]


def test_number_base_gradients():
    exponent = leaf([-1.0, 0.0, 2.0])
    out = 0.0 ** exponent
    assert out.tolist() == [math.inf, 1.0, 0.0]
    assert grads_of(out, exponent) == [[-math.inf, 0.0, 0.0]]
    grad = grads_of((-2.0) ** exponent, exponent)[0]
    assert all(math.isnan(value) for value in grad)
    assert grads_of(2.0 ** exponent, exponent)[0] == pytest.approx(
        [0.5 * math.log(2), math.log(2), 4 * math.log(2)])


def test_negative_base_with_integer_exponent():
    assert (genesis.tensor([-2.0]) ** 3).tolist() == [-8.0]
    assert math.isnan((genesis.tensor([-2.0]) ** 0.5).item())


def test_integer_tensor_to_negative_integer_tensor_power_follows_pytorch():
    base = genesis.tensor([0, 1, -1, 2, -2, -1])
    out = base ** genesis.tensor([-1, -1, -3, -2, -1, -2])
    assert out.dtype is genesis.int64 and out.tolist() == [0, 1, -1, 0, 0, 1]
    assert (2 ** genesis.tensor([-1, 2])).tolist() == [0, 4]


def test_bool_pow_bool_is_refused_but_bool_pow_int_promotes():
    mask = genesis.tensor([True, False])
    with pytest.raises(RuntimeError, match="pow: not supported for bool"):
        mask ** mask
    assert (mask ** 2).tolist() == [1, 0]


# -- bool rules, errors ----------------------------------------------------------------------

def test_bool_arithmetic():
    mask = genesis.tensor([True, False])
    assert (mask + mask).tolist() == [True, False] and (mask * mask).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="sub: .*bool tensor is not supported.*logical_xor"):
        mask - mask
    with pytest.raises(RuntimeError, match="sub: .*bool"):
        genesis.tensor([1, 2]) - True
    with pytest.raises(RuntimeError, match="neg: .*bool tensor is not supported.*`~`"):
        -mask


def test_broadcast_mismatch_names_the_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add: .*\(input shapes: \(2, 3\), \(4,\)\)"):
        genesis.ones(2, 3) + genesis.ones(4)
    with pytest.raises(RuntimeError, match=r"remainder: .*\(2, 3\), \(4,\)"):
        genesis.ones(2, 3) % genesis.ones(4)


def test_unsupported_operand_type_is_named():
    with pytest.raises(TypeError, match="mul: unsupported operand of type str"):
        genesis.ones(2) * "a"


# -- in place ------------------------------------------------------------------------------

@pytest.mark.parametrize("update, expected", [
    (lambda t: t.__ipow__(2), [4.0, 9.0]),
    (lambda t: t.__ifloordiv__(2), [1.0, 1.0]),
    (lambda t: t.__imod__(2), [0.0, 1.0]),
    (lambda t: t.pow_(genesis.tensor([1.0, 2.0])), [2.0, 9.0]),
    (lambda t: t.neg_(), [-2.0, -3.0]),
    (lambda t: t.div_(2, rounding_mode="floor"), [1.0, 1.0]),
    (lambda t: t.remainder_(2), [0.0, 1.0]),
    (lambda t: t.fmod_(-2), [0.0, 1.0]),
    (lambda t: t.floor_divide_(-2), [-1.0, -2.0]),
])
def test_in_place_values_and_version(update, expected):
    x = genesis.tensor([2.0, 3.0])
    assert update(x) is x
    assert x.tolist() == expected and x._version == 1


def test_in_place_pow_on_non_leaf_keeps_gradients_right():
    x = leaf([2.0, 3.0])
    y = x * 1
    y **= 3
    y.sum().backward()
    assert x.grad.tolist() == [12.0, 27.0]


def test_in_place_into_an_integer_tensor_refuses_a_float_result():
    with pytest.raises(RuntimeError, match="add_: can't update a tensor .* int64 in place"):
        genesis.tensor([1, 2]).add_(1.5)
    with pytest.raises(RuntimeError, match="div_: .*int64"):
        genesis.tensor([1, 2]).div_(2)
    assert genesis.tensor([7, 2]).div_(2, rounding_mode="trunc").tolist() == [3, 1]


def test_in_place_on_leaf_requiring_grad_is_refused():
    for update in (lambda t: t.pow_(2), lambda t: t.neg_(), lambda t: t.__imod__(2)):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            update(leaf([1.0, 2.0]))


# -- lerp, addcmul, addcdiv ---------------------------------------------------------------

def test_lerp_values_and_gradients():
    start, end, weight = leaf([1.0, 2.0]), leaf([3.0, -1.0]), leaf([0.2, 0.7])
    out = genesis.lerp(start, end, weight)
    assert out.tolist() == pytest.approx([1.4, -0.1])
    grads = grads_of(out, start, end, weight)
    assert [value for grad in grads for value in grad] == pytest.approx([0.8, 0.3, 0.2, 0.7, 2, -3])


def test_lerp_is_exact_at_the_ends():
    start, end = genesis.tensor([0.1, 1e8]), genesis.tensor([0.3, -1e-8])
    assert genesis.lerp(start, end, 1.0).tolist() == end.tolist()
    assert genesis.lerp(start, end, 0.0).tolist() == start.tolist()


def test_lerp_dtype_rules():
    x = genesis.ones(3)
    with pytest.raises(RuntimeError, match="lerp: expected end of dtype float32.*float64"):
        genesis.lerp(x, x.double(), 0.5)
    with pytest.raises(RuntimeError, match="lerp: expected weight of dtype float32.*float64"):
        genesis.lerp(x, x, genesis.ones(3, dtype=genesis.float64))
    with pytest.raises(RuntimeError, match="lerp: needs floating point tensors, got int64"):
        genesis.lerp(genesis.tensor([1]), genesis.tensor([2]), 0.5)
    half = genesis.tensor(0.5, dtype=genesis.float64)
    assert genesis.lerp(x, x * 3, half).dtype is genesis.float32


def test_addcmul_addcdiv_values_gradients_and_errors():
    base, t1, t2 = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([2.0, 8.0])
    assert genesis.addcmul(base, t1, t2, value=0.5).tolist() == [4.0, 18.0]
    assert grads_of(genesis.addcdiv(base, t1, t2, value=2), base, t1, t2) == [
        [1.0, 1.0], [1.0, 0.25], [-1.5, -0.125]]
    assert genesis.addcmul(genesis.tensor([1, 2]), genesis.tensor([1, 2]), genesis.tensor([1, 2]),
                           value=0.5).tolist() == [1, 2]  # value is cast to the integer result
    with pytest.raises(RuntimeError, match="addcdiv: integer division"):
        genesis.addcdiv(genesis.ones(2), genesis.tensor([1, 2]), genesis.tensor([1, 2]))
    with pytest.raises(TypeError, match="addcmul: value must be a number"):
        genesis.addcmul(genesis.ones(2), genesis.ones(2), genesis.ones(2), value="2")


@pytest.mark.parametrize("name, args", [
    ("addcmul", lambda t: (t * 2 + 1, t - 3)), ("addcdiv", lambda t: (t * 2 + 1, t + 5)),
])
def test_addc_in_place_fast_path_matches_out_of_place(name, args):
    rng = np.random.default_rng(0)
    base = genesis.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    t1, t2 = args(genesis.tensor(rng.standard_normal((4, 5)).astype(np.float32)))
    expected = getattr(genesis, name)(base, t1, t2, value=-0.3)
    target = base.clone()
    assert getattr(target, f"{name}_")(t1, t2, value=-0.3) is target
    assert np.array_equal(target.numpy(), expected.numpy()) and target._version == 1


def test_optimizer_style_updates_under_no_grad():
    param = leaf([1.0, 2.0])
    exp_avg = genesis.zeros(2, dtype=genesis.float64)
    with genesis.no_grad():
        exp_avg.lerp_(genesis.tensor([1.0, 1.0], dtype=genesis.float64), 0.1)
        param.addcdiv_(exp_avg, genesis.tensor([2.0, 4.0], dtype=genesis.float64), value=-1)
    assert param.tolist() == pytest.approx([0.95, 1.975]) and param.is_leaf


def test_lerp_in_place_on_non_leaf_gradients():
    x, end = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * 1
    y.lerp_(end, 0.25)
    assert grads_of(y, x, end) == [[0.75, 0.75], [0.25, 0.25]]


# -- double backward -------------------------------------------------------------------------

@pytest.mark.parametrize("call, make", [
    (lambda a, b: a ** b, lambda rng: (rng.uniform(0.5, 2, (3,)), rng.uniform(-1, 2, (3,)))),
    (lambda a, b: a / b, lambda rng: (rng.uniform(-2, 2, (3,)), rng.uniform(0.5, 2, (3,)))),
    (lambda a, b: a * b - a, lambda rng: (rng.uniform(-2, 2, (3,)), rng.uniform(-2, 2, (3,)))),
    (lambda a, b: genesis.lerp(a, b, b), lambda rng: (rng.uniform(-2, 2, (3,)),
                                                      rng.uniform(0, 1, (3,)))),
    (lambda a, b: genesis.addcdiv(a, a, b, value=0.5),
     lambda rng: (rng.uniform(-2, 2, (3,)), rng.uniform(0.5, 2, (3,)))),
], ids=["pow", "div", "mul-sub", "lerp", "addcdiv"])
def test_double_backward(call, make):
    arrays = make(np.random.default_rng(0))
    assert gradgradcheck(call, tuple(leaf(a) for a in arrays))
