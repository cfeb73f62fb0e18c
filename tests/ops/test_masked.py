"""masked_fill(_), masked_select, nonzero: value kinds, broadcasting, dtypes, errors."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_masked_fill_with_a_zero_dim_tensor_value_gets_its_gradient():
    x = genesis.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    value = genesis.tensor(9.0, requires_grad=True)
    out = x.masked_fill(x.detach() > 1.5, value)
    assert out.tolist() == [[1.0, 9.0], [9.0, 9.0]]
    (out * genesis.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert value.grad.item() == 9.0 and x.grad.tolist() == [[1.0, 0.0], [0.0, 0.0]]


def test_masked_fill_casts_the_value_and_broadcasts_the_mask():
    ints = genesis.tensor([[1, 2, 3]])
    assert ints.masked_fill(genesis.tensor([True, False, True]), 2.7).tolist() == [[2, 2, 2]]
    grown = genesis.zeros(3).masked_fill(genesis.tensor([[True], [False]]), 1.0)
    assert grown.shape == (2, 3) and grown.sum().item() == 3.0


def test_masked_fill_in_place_matches_torch():
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((3, 4))
    mask = data > 0
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    y, ty = x * 2, t * 2
    assert y.masked_fill_(genesis.from_numpy(mask[0]), -1.0) is y
    ty.masked_fill_(torch.tensor(mask[0]), -1.0)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
    plain = genesis.zeros(2, 2)
    plain.masked_fill_(genesis.tensor([[True, False], [False, True]]), 3.0)
    assert plain.tolist() == [[3.0, 0.0], [0.0, 3.0]] and plain._version == 1


def test_masked_select_and_nonzero_round_trip():
    x = genesis.tensor([[0.0, 3.0], [5.0, 0.0]])
    assert x.masked_select(x != 0).tolist() == [3.0, 5.0]
    rows, cols = x.nonzero(as_tuple=True)
    assert x[rows, cols].tolist() == [3.0, 5.0]
    assert x.nonzero().tolist() == [[0, 1], [1, 0]] and x.nonzero().dtype == genesis.int64
    assert genesis.argwhere(x).tolist() == [[0, 1], [1, 0]]


def test_nonzero_of_zero_dim_and_empty_tensors_match_torch():
    torch = torch_or_skip()
    for data in (np.array(5.0), np.array(0.0), np.zeros((0, 3))):
        x, t = genesis.from_numpy(data), torch.tensor(data)
        assert x.nonzero().shape == tuple(t.nonzero().shape)
        assert [i.tolist() for i in x.nonzero(as_tuple=True)] == [
            i.tolist() for i in t.nonzero(as_tuple=True)]


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.masked_fill(genesis.tensor([1, 0, 1]), 0.0), RuntimeError, "masked_fill: mask must be a bool"),
    (lambda x: x.masked_fill(x > 0, genesis.ones(2)), RuntimeError, "masked_fill: the value must be"),
    (lambda x: x.masked_fill(genesis.tensor([True, False]), 1.0), RuntimeError,
     r"masked_fill: the mask of shape \(2,\) can't be broadcast to the input's shape \(2, 3\)"),
    (lambda x: x.masked_fill_(genesis.ones(4, 2, 3, dtype=genesis.bool), 1.0), RuntimeError,
     "masked_fill_: the mask of shape .* would grow the tensor"),
    (lambda x: x.masked_select([True]), TypeError, "masked_select: mask must be a bool Tensor"),
])
def test_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(genesis.zeros(2, 3))
