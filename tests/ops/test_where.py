"""where and masked gradients: PyTorch's conventions, pinned literally."""
import math

import pytest

import genesis
from genesis.autograd import gradgradcheck
from tests.helpers import grads, leaf


def test_where_routes_gradients_by_the_condition():
    condition = genesis.tensor([True, False, True])
    a, b = leaf([1.0, 2.0, 3.0]), leaf([-1.0, -2.0, -3.0])
    out = genesis.where(condition, a, b)
    assert out.tolist() == [1.0, -2.0, 3.0]
    assert grads(out, [a, b]) == [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


def test_where_broadcasts_and_accepts_numbers():
    condition = genesis.tensor([[True], [False]])
    out = genesis.where(condition, genesis.tensor([1.0, 2.0, 3.0]), 0.0)
    assert out.tolist() == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    assert genesis.where(condition, 1, 0).tolist() == [[1], [0]]
    x = genesis.tensor([1.0, -2.0])
    assert x.where(x > 0, -1.0).tolist() == [1.0, -1.0]


def test_where_condition_must_be_bool():
    with pytest.raises(RuntimeError, match="where: condition must be a bool tensor, got int64"):
        genesis.where(genesis.tensor([1, 0]), 1.0, 0.0)


def test_masked_gradient_is_exactly_zero_even_for_infinite_upstream_gradients():
    x = leaf([-1.0, 2.0])
    out = genesis.where(x > 0, x, 0.0)
    assert grads(out, [x], genesis.tensor([math.inf, 1.0], dtype=genesis.float64)) == [[0.0, 1.0]]
    y = leaf([-1.0, 2.0])
    assert grads(y.relu(), [y], genesis.tensor([math.nan, 1.0], dtype=genesis.float64)) == [
        [0.0, 1.0]]


def test_double_backward_through_masked_gradients():
    x = leaf([-1.5, 0.5, 2.0])
    assert gradgradcheck(lambda t: genesis.maximum(t * t, t).clamp(0.3, 3.0), (x,))
    assert gradgradcheck(lambda t: genesis.where(t > 0, t * t, -t), (x,))
