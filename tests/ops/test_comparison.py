"""Comparisons, predicates, closeness, logical and bitwise ops: bool results, no gradients,
PyTorch's dtype rules and errors."""
import math

import pytest

import genesis


def test_comparisons_broadcast_and_return_bool_without_grad():
    a = genesis.tensor([[1.0], [2.0]], requires_grad=True)
    b = genesis.tensor([1.0, 2.0, 3.0])
    out = a < b
    assert out.dtype is genesis.bool and out.shape == (2, 3)
    assert out.tolist() == [[False, True, True], [False, False, True]]
    assert not out.requires_grad and out.grad_fn is None
    assert (a >= 2).tolist() == [[False], [True]]
    assert (2 < a).tolist() == [[False], [False]] and (2 <= a).tolist() == [[False], [True]]
    assert genesis.ne(b, 2.0).tolist() == [True, False, True]
    assert b.greater_equal(2.0).tolist() == [False, True, True]


def test_comparisons_promote_like_arithmetic():
    x = genesis.tensor([0, 1, 2])
    assert (x < 0.5).tolist() == [True, False, False]
    assert (x == genesis.tensor([0.0, 1.5, 2.0])).tolist() == [True, False, True]
    assert (genesis.tensor([True, False]) == 1).tolist() == [True, False]
    assert (genesis.tensor([True, False]) < 0.5).tolist() == [False, True]


def test_comparison_shape_mismatch_names_the_op():
    with pytest.raises(RuntimeError, match=r"lt: .*\(2,\), \(3,\)"):
        genesis.ones(2) < genesis.ones(3)


def test_predicates_on_floats_and_integers():
    x = genesis.tensor([1.0, math.nan, math.inf, -math.inf])
    assert x.isnan().tolist() == [False, True, False, False]
    assert x.isinf().tolist() == [False, False, True, True]
    assert x.isfinite().tolist() == [True, False, False, False]
    assert genesis.isposinf(x).tolist() == [False, False, True, False]
    assert genesis.isneginf(x).tolist() == [False, False, False, True]
    integers = genesis.tensor([1, 2])
    assert integers.isnan().tolist() == [False, False]
    assert integers.isfinite().tolist() == [True, True]
    assert genesis.isposinf(integers).tolist() == [False, False]


def test_isclose_and_allclose():
    a = genesis.tensor([1.0, math.nan, math.inf, -math.inf, 1.0])
    b = genesis.tensor([1.0 + 1e-7, math.nan, math.inf, math.inf, 1.1])
    assert genesis.isclose(a, b).tolist() == [True, False, True, False, False]
    assert genesis.isclose(a, b, equal_nan=True).tolist()[1] is True
    assert a.isclose(b, rtol=0.2).tolist()[4] is True
    assert genesis.isclose(genesis.zeros(2, 3), genesis.zeros(3)).shape == (2, 3)
    result = genesis.allclose(genesis.tensor([1.0, 2.0]), genesis.tensor([1.0, 2.0 + 1e-6]))
    assert result is True
    assert genesis.tensor([1.0]).allclose(genesis.tensor([2.0])) is False


def test_isclose_refuses_mixed_dtypes_and_negative_tolerances():
    with pytest.raises(RuntimeError, match="isclose: input is float32 but other is float64"):
        genesis.isclose(genesis.ones(2), genesis.ones(2, dtype=genesis.float64))
    with pytest.raises(RuntimeError, match="allclose: input is int64 but other is float32"):
        genesis.allclose(genesis.tensor([1]), genesis.ones(1))
    with pytest.raises(RuntimeError, match="rtol and atol must be >= 0"):
        genesis.isclose(genesis.ones(2), genesis.ones(2), rtol=-1)


def test_equal_compares_shape_and_values():
    assert genesis.equal(genesis.tensor([1, 2]), genesis.tensor([1.0, 2.0])) is True
    assert genesis.equal(genesis.zeros(2, 3), genesis.zeros(3)) is False
    assert genesis.tensor([math.nan]).equal(genesis.tensor([math.nan])) is False
    assert genesis.tensor([1.0, 2.0]).equal(genesis.tensor([1.0, 2.5])) is False
    with pytest.raises(TypeError, match="equal: other must be a Tensor"):
        genesis.equal(genesis.ones(1), 1.0)


def test_all_and_any():
    x = genesis.tensor([[1, 0], [2, 3]])
    assert x.all().item() is False and x.any().item() is True
    assert x.all(dim=1).tolist() == [False, True]
    assert x.any(dim=0, keepdim=True).shape == (1, 2)


# -- logical and bitwise -------------------------------------------------------------------

def test_logical_ops_on_any_dtype():
    a, b = genesis.tensor([1.5, 0.0, -2.0]), genesis.tensor([1, 1, 0])
    assert genesis.logical_and(a, b).tolist() == [True, False, False]
    assert genesis.logical_or(a, b).tolist() == [True, True, True]
    assert genesis.logical_xor(a, b).tolist() == [False, True, True]
    assert genesis.logical_not(a).tolist() == [False, True, False]
    assert a.logical_and(True).dtype is genesis.bool


def test_bitwise_operators_on_bool_and_integers():
    mask = genesis.tensor([True, False, True])
    other = genesis.tensor([True, True, False])
    assert (mask & other).tolist() == [True, False, False]
    assert (mask | other).tolist() == [True, True, True]
    assert (mask ^ other).tolist() == [False, True, True]
    assert (~mask).tolist() == [False, True, False]
    assert (True & mask).tolist() == [True, False, True]
    assert (False | mask).tolist() == mask.tolist()
    x = genesis.tensor([6, 5])
    assert (x & 3).tolist() == [2, 1] and (x | 1).tolist() == [7, 5] and (~x).tolist() == [-7, -6]
    assert (x & mask[:2]).tolist() == [0, 0] and (x & mask[:2]).dtype is genesis.int64


def test_bitwise_on_floats_is_refused_with_a_hint():
    with pytest.raises(RuntimeError, match="bitwise_and: only bool and integer tensors.*float32"):
        genesis.ones(2) & genesis.ones(2)
    with pytest.raises(RuntimeError, match="bitwise_or: .*int64 and float"):
        genesis.tensor([1]) | 1.5
    with pytest.raises(RuntimeError, match=r"bitwise_not \(~\): .*float32.*logical_not"):
        ~genesis.ones(2)


def test_bitwise_in_place():
    mask = genesis.tensor([True, False])
    mask &= genesis.tensor([False, False])
    assert mask.tolist() == [False, False] and mask._version == 1
    x = genesis.tensor([4, 1])
    x |= 2
    x ^= genesis.tensor([1, 1])
    assert x.tolist() == [7, 2] and x._version == 2
    with pytest.raises(RuntimeError, match="bitwise_and: .*float"):
        mask &= 1.5
