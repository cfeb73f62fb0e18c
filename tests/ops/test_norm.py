"""norm / vector_norm: orders, kinks (PyTorch's conventions), arguments and errors."""
import math

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, math.inf, -1.0, "fro"])
def test_gradient_at_a_zero_vector_is_zero(p):
    x = leaf([0.0, 0.0, 0.0])
    x.norm(p).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_inf_norm_splits_the_gradient_among_tied_magnitudes_with_their_signs():
    x = leaf([-3.0, 3.0, 1.0])
    x.norm(math.inf).backward()
    assert x.grad.tolist() == [-0.5, 0.5, 0.0]
    y = leaf([-1.0, 1.0, 4.0])
    y.norm(-math.inf).backward()
    assert y.grad.tolist() == [-0.5, 0.5, 0.0]


def test_p_below_one_gives_zero_gradient_at_zero_elements():
    torch = torch_or_skip()
    data = [0.0, 1.0, -2.0]
    for p in (0.5, 1.0):
        x, t = leaf(data), torch.tensor(data, dtype=torch.float64, requires_grad=True)
        x.norm(p).backward()
        torch.norm(t, p).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
        assert x.grad[0].item() == 0.0


def test_zero_norm_counts_nonzeros_and_has_zero_gradient():
    x = leaf([[0.0, 2.0], [3.0, -1.0]])
    result = x.norm(0, dim=1)
    assert result.tolist() == [1.0, 2.0]
    result.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_dims_keepdim_and_dtype():
    x = genesis.tensor([[3.0, 4.0], [6.0, 8.0]])
    assert x.norm(dim=1).tolist() == [5.0, 10.0]
    assert x.norm(dim=(0, 1), keepdim=True).shape == (1, 1)
    assert x.norm(keepdim=True).shape == (1, 1)
    assert genesis.norm(genesis.tensor([3, 4]), dtype=genesis.float64).dtype == genesis.float64
    assert genesis.vector_norm(x, 1, dim=0).tolist() == [9.0, 12.0]


def test_second_derivative_of_the_two_norm_matches_finite_differences():
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)))
    assert genesis.autograd.gradgradcheck(lambda x: x.norm(dim=1), (x,))
    assert genesis.autograd.gradgradcheck(lambda x: x.norm(3.0), (x,))


def test_errors():
    with pytest.raises(ValueError, match="norm: p='nuc' is not supported"):
        genesis.ones(2, 2).norm("nuc")
    with pytest.raises(RuntimeError, match="norm: input dtype must be floating point"):
        genesis.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="inf norm of a tensor with no elements"):
        genesis.zeros(0).norm(math.inf)
    with pytest.raises(IndexError, match="vector_norm: dim 2"):
        genesis.vector_norm(genesis.ones(2, 2), dim=2)


def test_matrix_norm_errors_name_the_problem():
    a = genesis.ones(2, 3)
    with pytest.raises(RuntimeError, match="ord=3 is not supported"):
        genesis.linalg.matrix_norm(a, 3)
    with pytest.raises(RuntimeError, match="ord='max' is not supported"):
        genesis.linalg.matrix_norm(a, "max")
    with pytest.raises(RuntimeError, match="two different dims"):
        genesis.linalg.matrix_norm(a, 1, (1, -1))
    with pytest.raises(RuntimeError, match="needs a floating point input, got int64"):
        genesis.linalg.matrix_norm(a.long(), 1)
    assert genesis.linalg.matrix_norm(a.long(), 1, dtype=genesis.float32).item() == 2.0
