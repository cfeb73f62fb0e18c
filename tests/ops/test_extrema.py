"""max/min/amax/amin/argmax/argmin: PyTorch's tie conventions pinned with literal values,
return types, NaN, dtypes and errors."""
import math

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


def test_full_max_and_min_split_the_gradient_among_ties():
    x = leaf([1.0, 3.0, 3.0, 2.0])
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    y = leaf([[1.0, 0.0], [0.0, 0.0]])
    y.min().backward()
    np.testing.assert_allclose(y.grad.numpy(), [[0.0, 1 / 3], [1 / 3, 1 / 3]])


def test_max_along_a_dim_sends_the_gradient_to_the_first_tied_index():
    x = leaf([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 0.0, 5.0]])
    values, indices = x.max(dim=1)
    assert indices.tolist() == [1, 0] and values.tolist() == [3.0, 5.0]
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]


def test_amax_and_amin_split_ties_within_each_reduced_slice():
    x = leaf([[2.0, 2.0, 1.0], [0.0, 4.0, 4.0]])
    x.amax(dim=1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    y = leaf([[1.0, 1.0], [1.0, 2.0]])
    y.amin(dim=(0, 1)).backward()
    np.testing.assert_allclose(y.grad.numpy(), [[1 / 3, 1 / 3], [1 / 3, 0.0]])


def test_tie_gradients_match_torch():
    torch = torch_or_skip()
    data = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    calls = [
        (lambda x: x.max(), lambda t: t.max()),
        (lambda x: x.min(dim=0).values, lambda t: t.min(dim=0).values),
        (lambda x: x.amax(dim=1, keepdim=True), lambda t: t.amax(dim=1, keepdim=True)),
        (lambda x: x.amin(), lambda t: t.amin()),
    ]
    for ours, theirs in calls:
        x, t = leaf(data), torch.tensor(data, requires_grad=True)
        out, reference = ours(x), theirs(t)
        weights = np.random.default_rng(0).standard_normal(out.shape)
        out.backward(genesis.tensor(weights, dtype=genesis.float64))
        reference.backward(torch.tensor(weights))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_nan_wins_and_gets_the_gradient():
    x = leaf([1.0, math.nan, 3.0])
    result = x.max()
    assert math.isnan(result.item())
    result.backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert genesis.tensor([1.0, math.nan, 3.0]).argmin().item() == 1
    values, indices = genesis.tensor([[1.0, math.nan]]).min(dim=1)
    assert math.isnan(values.item()) and indices.item() == 1


def test_dim_result_is_a_named_tuple():
    values, indices = genesis.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1, keepdim=True)
    result = genesis.tensor([[1.0, 5.0], [7.0, 2.0]]).min(dim=0)
    assert values.shape == (2, 1) and indices.dtype == genesis.int64
    assert result.values.tolist() == [1.0, 2.0] and result.indices.tolist() == [0, 1]
    assert repr(result).startswith("min(values=tensor(")
    assert result[1] is result.indices
    assert not result.indices.requires_grad


def test_max_with_a_tensor_is_the_elementwise_maximum():
    a, b = genesis.tensor([1.0, 5.0]), genesis.tensor([3.0, 2.0])
    assert genesis.max(a, b).tolist() == [3.0, 5.0]
    assert a.min(b).tolist() == [1.0, 2.0]


def test_argmax_conventions():
    x = genesis.tensor([[1.0, 7.0], [7.0, 2.0]])
    assert x.argmax().item() == 1  # flattened, first of the ties
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert x.argmax(dim=0).tolist() == [1, 0]
    assert x.argmin(dim=-1, keepdim=True).tolist() == [[0], [1]]
    assert x.argmax().dtype == genesis.int64
    assert genesis.tensor(4.0).argmax(0).item() == 0


def test_integer_inputs_keep_their_dtype_and_get_no_graph():
    x = genesis.tensor([[3, 1], [2, 8]])
    assert x.max().item() == 8 and x.max().dtype == genesis.int64
    assert x.amin(dim=1).tolist() == [1, 2]
    assert x.max(dim=0).values.grad_fn is None


def test_zero_dim_input():
    x = leaf(2.5)
    values, indices = x.max(dim=0)
    assert values.shape == () and indices.item() == 0
    values.backward()
    assert x.grad.item() == 1.0


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="max: can't reduce a tensor with no elements"):
        genesis.zeros(0, 3).max()
    with pytest.raises(IndexError, match="amax: dim 0 .* has size 0"):
        genesis.zeros(0, 3).amax(dim=0)
    with pytest.raises(IndexError, match=r"min: dim 3 is out of range .*\[-2, 1\]"):
        genesis.zeros(2, 3).min(dim=3)
    with pytest.raises(IndexError, match="argmax: dim 1 .* has size 0"):
        genesis.zeros(2, 0).argmax(dim=1)
    assert genesis.zeros(0, 3).amax(dim=1).shape == (0,)
