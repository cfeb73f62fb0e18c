"""Two-input math (genesis/ops/binary_math.py): quadrants, dtype rules, extremes without
overflow, and gradients of every order. The registry tests check each op's gradient
against finite differences and against PyTorch."""
import math

import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck


def leaf(values, dtype=genesis.float64):
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


def test_atan2_quadrants_and_integers():
    y, x = genesis.tensor([1.0, 1.0, -1.0, -1.0]), genesis.tensor([1.0, -1.0, -1.0, 1.0])
    assert genesis.atan2(y, x).tolist() == pytest.approx(
        [math.pi / 4, 3 * math.pi / 4, -3 * math.pi / 4, -math.pi / 4])
    out = genesis.atan2(genesis.tensor([1]), genesis.tensor([1]))
    assert out.dtype is genesis.float32


def test_hypot_and_logaddexp_need_floats_and_handle_extremes():
    with pytest.raises(RuntimeError, match="hypot: needs floating point inputs, got int64 and"):
        genesis.hypot(genesis.tensor([3]), genesis.tensor([4]))
    big = genesis.tensor([3e300, 4e300], dtype=genesis.float64)
    assert genesis.hypot(big[0], big[1]).item() == pytest.approx(5e300)
    inf = math.inf
    x = genesis.tensor([-inf, inf, 1000.0])
    out = genesis.logaddexp(x, x)
    assert out.tolist() == pytest.approx([-inf, inf, 1000.0 + math.log(2)])


def test_binary_math_gradients():
    a, b = leaf([1.0, -2.0]), leaf([3.0, 0.5])
    grad_a, grad_b = genesis.autograd.grad(genesis.atan2(a, b).sum(), [a, b])
    assert grad_a.tolist() == pytest.approx([3 / 10, 0.5 / 4.25])
    assert grad_b.tolist() == pytest.approx([-1 / 10, 2 / 4.25])
    assert gradgradcheck(genesis.logaddexp, (a, b))
    assert gradgradcheck(genesis.hypot, (a, b))


def test_logaddexp2_is_stable_and_matches_numpy():
    inf = math.inf
    x = genesis.tensor([-inf, inf, 1000.0, -3.0], dtype=genesis.float64)
    y = genesis.tensor([-inf, 1.0, 1000.0, 2.0], dtype=genesis.float64)
    np.testing.assert_allclose(genesis.logaddexp2(x, y).numpy(),
                               np.logaddexp2(x.numpy(), y.numpy()))
    assert genesis.logaddexp2(x[2], y[2]).item() == 1001.0
    with pytest.raises(RuntimeError, match="logaddexp2: needs floating point inputs"):
        genesis.logaddexp2(genesis.tensor([1]), genesis.tensor([2]))


def test_logaddexp2_gradient_weights_each_input_by_its_share():
    a, b = leaf([0.0, 3.0]), leaf([1.0, 3.0])
    genesis.logaddexp2(a, b).sum().backward()
    assert a.grad.tolist() == pytest.approx([1 / 3, 0.5])  # 2^a / (2^a + 2^b)
    assert b.grad.tolist() == pytest.approx([2 / 3, 0.5])
    assert a.logaddexp2(b).tolist() == genesis.logaddexp2(a, b).tolist()
    assert gradgradcheck(genesis.logaddexp2, (leaf([0.3, -1.2]), leaf([2.0, 0.1])))
