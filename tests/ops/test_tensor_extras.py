"""Tensor predicates and shape helpers, and the in-place forms built on copy_: results equal
to PyTorch's, gradients through an in-place form, and copy_'s refusals."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_predicates_and_properties_match_pytorch():
    torch = torch_or_skip()
    for dtype in ("float32", "int64", "uint8", "bool"):
        mine, theirs = genesis.zeros(2, 3, dtype=dtype), torch.zeros(2, 3, dtype=getattr(torch, dtype))
        assert mine.is_signed() == theirs.is_signed()
        assert (mine.itemsize, mine.nbytes, mine.ndimension()) == (theirs.itemsize, theirs.nbytes,
                                                                   theirs.ndimension())
    x = genesis.zeros(2, 3)
    assert x.is_cpu and not x.is_inference() and x.is_same_size(genesis.ones(2, 3))
    assert genesis.tensor([3.0]).is_nonzero() and not genesis.tensor([0.0]).is_nonzero()
    with pytest.raises(RuntimeError, match="ambiguous"):
        genesis.tensor([1.0, 2.0]).is_nonzero()


@pytest.mark.parametrize("name, args", [
    ("tensor_split", (3,)), ("tensor_split", ([1, 4],)), ("tensor_split", (2, 1)),
    ("hsplit", (3,)), ("vsplit", (2,)), ("split_with_sizes", ([1, 1],)),
])
def test_splits_match_pytorch(name, args):
    torch = torch_or_skip()
    data = np.arange(12.0).reshape(2, 6)
    mine = getattr(genesis.tensor(data), name)(*args)
    theirs = getattr(torch.tensor(data), name)(*args)
    assert [p.tolist() for p in mine] == [p.tolist() for p in theirs]


def test_elementwise_helpers_match_pytorch():
    torch = torch_or_skip()
    data = [-180.0, -0.0, 0.0, 90.0]
    for name in ("deg2rad", "rad2deg", "signbit", "sgn", "positive", "ravel"):
        mine = getattr(genesis.tensor(data, dtype=genesis.float64), name)()
        theirs = getattr(torch.tensor(data, dtype=torch.float64), name)()
        np.testing.assert_allclose(np.asarray(mine.tolist(), dtype=float), np.asarray(theirs.tolist(), dtype=float))
    assert genesis.ones(2, 3).sum_to_size(1, 3).tolist() == [[2.0, 2.0, 2.0]]


@pytest.mark.parametrize("name, args", [
    ("tril_", ()), ("triu_", (1,)), ("cumsum_", (1,)), ("cumprod_", (0,)),
    ("hypot_", ("other",)), ("atan2_", ("other",)), ("eq_", ("other",)), ("lt_", ("other",)),
    ("logical_and_", ("other",)), ("logical_not_", ()), ("nan_to_num_", ()),
])
def test_in_place_forms_match_pytorch(name, args):
    torch = torch_or_skip()
    data, other = np.array([[1.0, -2.0], [3.0, 0.5]]), np.array([[1.0, 2.0], [-3.0, 0.5]])
    mine, theirs = genesis.tensor(data, dtype=genesis.float64), torch.tensor(data)
    mine_args = [genesis.tensor(other, dtype=genesis.float64) if a == "other" else a for a in args]
    their_args = [torch.tensor(other) if a == "other" else a for a in args]
    returned = getattr(mine, name)(*mine_args)
    getattr(theirs, name)(*their_args)
    assert returned is mine
    np.testing.assert_allclose(mine.numpy(), theirs.numpy())


def test_an_in_place_form_carries_the_gradient_and_refuses_leaves():
    w = genesis.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = w * 2
    version = y._version
    y.cumsum_(1)
    assert y._version > version
    y.sum().backward()
    assert w.grad.tolist() == [[4.0, 2.0], [4.0, 2.0]]
    with pytest.raises(RuntimeError, match="leaf"):
        genesis.zeros(2, 2, requires_grad=True).tril_()
