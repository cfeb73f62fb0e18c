"""cat / stack / split / chunk / unbind: dtype promotion, gradients to each piece, errors."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_cat_promotes_dtypes_like_torch():
    f32, f64 = genesis.ones(2, dtype=genesis.float32), genesis.ones(1, dtype=genesis.float64)
    ints = genesis.tensor([1, 2])
    assert genesis.cat([f32, f64]).dtype == genesis.float64
    assert genesis.cat([ints, f32]).dtype == genesis.float32
    assert genesis.stack([ints, genesis.tensor([True, False])]).dtype == genesis.int64


def test_cat_gradient_goes_back_to_each_input_in_its_dtype():
    a = genesis.tensor([1.0, 2.0], dtype=genesis.float32, requires_grad=True)
    b = genesis.tensor([[3.0]], dtype=genesis.float64, requires_grad=True)
    out = genesis.cat([a.unsqueeze(0), b.expand(1, 2)], dim=0)
    (out * genesis.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=genesis.float64)).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and a.grad.dtype == genesis.float32
    assert b.grad.tolist() == [[7.0]]


def test_cat_skips_legacy_empty_vectors_and_has_aliases():
    x = genesis.ones(2, 3)
    assert genesis.cat([x, genesis.zeros(0), x]).shape == (4, 3)
    assert genesis.concat([x, x], dim=-1).shape == (2, 6)
    assert genesis.concatenate((x, x)).shape == (4, 3)


def test_split_chunk_unbind_match_torch():
    torch = torch_or_skip()
    data = np.arange(14.0).reshape(7, 2)
    x, t = genesis.tensor(data), torch.tensor(data)
    pairs = [
        (x.split(3), t.split(3)), (x.split([2, 0, 5]), t.split([2, 0, 5])),
        (x.split(1, dim=1), t.split(1, dim=1)), (x.chunk(3), t.chunk(3)), (x.chunk(5), t.chunk(5)),
        (x.chunk(2, 1), t.chunk(2, 1)), (x.unbind(1), t.unbind(1)),
        (genesis.zeros(0, 3).split(2), torch.zeros(0, 3).split(2)),
    ]
    for ours, theirs in pairs:
        assert len(ours) == len(theirs) and isinstance(ours, tuple)
        for mine, reference in zip(ours, theirs):
            np.testing.assert_array_equal(mine.numpy(), reference.numpy())


def test_unused_pieces_get_zero_gradient():
    x = genesis.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    first, _ = x.split(2)
    (first * 5).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 0.0, 0.0]
    y = genesis.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y.unbind(1)[1].sum().backward()
    assert y.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_stack_then_unbind_round_trip_gradient():
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    b = genesis.tensor([3.0, 4.0], requires_grad=True)
    stacked = genesis.stack([a, b], dim=1)
    assert stacked.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    (stacked * genesis.tensor([[1.0, 10.0], [2.0, 20.0]])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and b.grad.tolist() == [10.0, 20.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: genesis.cat([genesis.zeros(2, 3), genesis.zeros(2, 4)]), RuntimeError,
     r"cat: tensors must have the same shape except in dim 0, but got shapes \(2, 3\), \(2, 4\)"),
    (lambda: genesis.cat([genesis.zeros(2, 3), genesis.zeros(3)]), RuntimeError, "cat: tensors must"),
    (lambda: genesis.cat([]), RuntimeError, "cat: expected a non-empty list"),
    (lambda: genesis.cat(genesis.zeros(2)), TypeError, "cat: expected a list or tuple of Tensors"),
    (lambda: genesis.cat([genesis.zeros(2), 1.0]), TypeError, "cat: element 1 is a float"),
    (lambda: genesis.cat([genesis.tensor(1.0)]), RuntimeError, "cat: zero-dimensional"),
    (lambda: genesis.cat([genesis.zeros(2, 3)], dim=2), IndexError, "cat: dim 2 is out of range"),
    (lambda: genesis.stack([genesis.zeros(2), genesis.zeros(3)]), RuntimeError,
     r"stack: expects each tensor to be the same shape, got \(2,\), \(3,\)"),
    (lambda: genesis.stack([genesis.zeros(2)], dim=2), IndexError, "stack: dim 2"),
    (lambda: genesis.zeros(5).split([2, 2]), RuntimeError,
     r"split: sizes \[2, 2\] must be non-negative and add up to 5"),
    (lambda: genesis.zeros(5).split(0), RuntimeError, "split: split_size must be positive"),
    (lambda: genesis.zeros(5).chunk(0), RuntimeError, "chunk: chunks must be positive"),
    (lambda: genesis.tensor(1.0).unbind(), RuntimeError, "unbind: can't unbind a 0-d tensor"),
])
def test_errors_name_the_op_and_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()
