"""sum, mean, prod, var, std: dims, keepdim, dtypes, argument spellings, kinks, errors."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def leaf(values, dtype=genesis.float64):
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("values, expected", [
    ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),      # one zero: only it gets the product of the others
    ([2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]),  # two zeros: every gradient is zero
    ([2.0, 5.0, 3.0], [15.0, 6.0, 10.0]),
])
def test_prod_gradient_is_the_product_of_the_others_even_with_zeros(values, expected):
    x = leaf(values)
    x.prod().backward()
    assert x.grad.tolist() == expected


def test_prod_along_a_dim_with_zeros_matches_torch():
    torch = torch_or_skip()
    data = np.array([[2.0, 0.0, 3.0], [1.0, 4.0, 0.5], [0.0, 0.0, 2.0]])
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    weights = np.array([1.0, -2.0, 3.0])
    (x.prod(dim=1) * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (t.prod(dim=1) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_prod_second_derivative_with_a_zero():
    x = leaf([2.0, 0.0, 3.0, 1.5])
    assert genesis.autograd.gradgradcheck(lambda x: x.prod(), (x,))
    y = leaf([[2.0, 0.0], [0.0, 3.0], [1.0, 2.0]])
    assert genesis.autograd.gradgradcheck(lambda y: y.prod(dim=0, keepdim=True), (y,))


def test_prod_dtype_and_shape_rules():
    ints = genesis.tensor([[1, 2], [3, 4]], dtype=genesis.int32)
    assert ints.prod().dtype == genesis.int64 and ints.prod().item() == 24
    assert genesis.tensor([True, True]).prod().dtype == genesis.int64
    assert ints.prod(dim=0, keepdim=True).shape == (1, 2)
    assert ints.prod(dim=-1).tolist() == [2, 12]
    assert genesis.ones(2, 3).prod(1, dtype=genesis.float64).dtype == genesis.float64


def test_prod_bad_dim_names_the_op_and_range():
    with pytest.raises(IndexError, match=r"prod: dim 2 .*\[-2, 1\]"):
        genesis.ones(2, 3).prod(dim=2)


def test_var_and_std_argument_spellings_match_torch():
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((3, 4))
    x, t = genesis.tensor(data, dtype=genesis.float64), torch.tensor(data)
    pairs = [
        (x.var(), t.var()), (x.var(0), t.var(0)), (x.var(False), t.var(False)),
        (x.var(1, False, True), t.var(1, False, True)), (x.var(dim=(0, 1), correction=2),
                                                         t.var(dim=(0, 1), correction=2)),
        (x.std(unbiased=False), t.std(unbiased=False)), (x.std(-1, keepdim=True), t.std(-1, keepdim=True)),
        (x.std(dim=0, correction=0), t.std(dim=0, correction=0)),
        (genesis.var(x, axis=1, keepdims=True), torch.var(t, dim=1, keepdim=True)),
    ]
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_std_gradient_is_zero_where_the_deviation_is_zero():
    x = leaf([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    x.std(dim=1).sum().backward()
    assert x.grad[0].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(x.grad[1].numpy(), [-0.5, 0.0, 0.5])


def test_var_with_no_degrees_of_freedom_warns_and_gives_nan():
    x = leaf([3.0])
    with pytest.warns(RuntimeWarning, match="degrees of freedom"):
        result = x.var()
    assert np.isnan(result.item())
    with pytest.warns(RuntimeWarning, match="degrees of freedom"):
        assert np.isnan(genesis.zeros(0, 3).std(dim=0).numpy()).all()


def test_var_refuses_integers_and_conflicting_arguments():
    with pytest.raises(RuntimeError, match="var: input dtype must be floating point"):
        genesis.tensor([1, 2, 3]).var()
    with pytest.raises(TypeError, match="either unbiased or correction"):
        genesis.ones(3).std(unbiased=True, correction=1)


def test_var_second_derivative():
    x = leaf(np.random.default_rng(1).standard_normal((3, 4)))
    assert genesis.autograd.gradgradcheck(lambda x: x.var(dim=1), (x,))
    assert genesis.autograd.gradgradcheck(lambda x: x.std(dim=0, correction=0), (x,))


def test_mean_refuses_integers():
    with pytest.raises(RuntimeError, match="mean: input dtype must be floating point"):
        genesis.tensor([1, 2]).mean()


def _mean_with_dtype(lib) -> list:
    """mean(dtype=...): computed and returned in that dtype; its gradient in the input's."""
    x = lib.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
    whole = x.mean(dtype=lib.float64)
    whole.backward()
    rows = lib.mean(lib.tensor([[1, 2], [3, 4]]), 1, keepdim=True, dtype=lib.float32)
    found = [(whole.item(), str(whole.dtype).split(".")[-1]), x.grad.tolist(),
             str(x.grad.dtype).split(".")[-1], rows.tolist(), str(rows.dtype).split(".")[-1]]
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point"):
        lib.tensor([1, 2]).mean(dtype=lib.int64)
    return found


def test_mean_takes_a_dtype():
    assert _mean_with_dtype(genesis) == [(2.75, "float64"), [[0.25, 0.25], [0.25, 0.25]],
                                         "float32", [[1.5], [3.5]], "float32"]


def test_mean_with_a_dtype_matches_pytorch():
    torch = torch_or_skip()
    assert _mean_with_dtype(genesis) == _mean_with_dtype(torch)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("shape, dims, keepdim", [
    ((100_000, 16), 0, False),      # a long batch axis: a bias gradient's sum
    ((4_099, 3, 5), (0, 2), True),  # rows that do not fill the last block, two dims
    ((1_023, 8), 0, False),         # too few rows for blocks: NumPy's own sum
])
def test_float32_sums_over_a_long_batch_axis_are_as_precise_as_pytorchs(op, shape, dims, keepdim):
    """NumPy adds the rows of an axis-0 sum one by one (1e-5 relative off over 100,000 float32
    rows); genesis sums them in blocks, near PyTorch's cascade."""
    rows = (np.random.default_rng(0).standard_normal(shape) + 3).astype(np.float32)
    exact = rows.astype(np.float64).sum(dims, keepdims=keepdim)
    if op == "mean":
        exact /= rows.size // exact.size
    made = getattr(genesis.tensor(rows), op)(dims, keepdim=keepdim)
    assert made.dtype is genesis.float32 and made.shape == exact.shape
    np.testing.assert_allclose(made.numpy(), exact, rtol=2e-6)
    torch = torch_or_skip()
    theirs = getattr(torch.tensor(rows), op)(dims, keepdim=keepdim).numpy()
    np.testing.assert_allclose(made.numpy(), theirs, rtol=2e-6)
