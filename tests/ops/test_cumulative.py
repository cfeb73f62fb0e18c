"""cumsum / cumprod: dtypes, 0-d, and cumprod's exact gradient with zeros (to second order)."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


def test_cumprod_gradient_with_zeros():
    x = leaf([2.0, 0.0, 3.0, 0.0])
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0, 8.0, 0.0, 0.0]


@pytest.mark.parametrize("values", [
    [2.0, 0.0, 3.0, 1.5], [0.0, 2.0, 0.0, 3.0], [1.5, -2.0, 0.5, 0.0], [0.0, 0.0, 0.0, 2.0]])
def test_cumprod_with_zeros_is_exact_to_second_order(values):
    x = leaf(values)
    assert genesis.autograd.gradcheck(lambda x: x.cumprod(0), (x,))
    assert genesis.autograd.gradgradcheck(lambda x: x.cumprod(0), (x,))


def test_cumprod_with_zeros_along_a_dim_matches_torch():
    torch = torch_or_skip()
    data = np.array([[2.0, 0.0, 3.0], [0.0, 1.0, 4.0], [1.0, 2.0, 0.5]])
    weights = np.random.default_rng(0).standard_normal(data.shape)
    for dim in (0, 1):
        x, t = leaf(data), torch.tensor(data, requires_grad=True)
        x.cumprod(dim).backward(genesis.tensor(weights, dtype=genesis.float64))
        t.cumprod(dim).backward(torch.tensor(weights))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_dtypes():
    ints = genesis.tensor([1, 2, 3], dtype=genesis.int32)
    assert ints.cumsum(0).dtype == genesis.int64 and ints.cumsum(0).tolist() == [1, 3, 6]
    assert genesis.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert ints.cumprod(0, dtype=genesis.float32).dtype == genesis.float32


def test_zero_dim_and_errors():
    x = leaf(3.0)
    x.cumsum(0).backward()
    assert x.cumsum(-1).item() == 3.0 and x.grad.item() == 1.0
    with pytest.raises(IndexError, match="cumsum: dim 2"):
        genesis.ones(2, 2).cumsum(2)
    with pytest.raises(IndexError, match="cumprod: dim 1"):
        genesis.tensor(1.0).cumprod(1)
