"""genesis.linalg: second derivatives, singular matrices and errors (the registry checks values
and first derivatives against PyTorch and finite differences)."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck


def _matrix(rng, *shape, shift=4.0):
    return genesis.from_numpy(rng.uniform(-1, 1, shape) + shift * np.eye(shape[-1])).requires_grad_()


@pytest.mark.parametrize("name, call", [
    ("inv", lambda a, b: genesis.linalg.inv(a)),
    ("det", lambda a, b: genesis.linalg.det(a)),
    ("slogdet", lambda a, b: genesis.linalg.slogdet(a)[1]),
    ("solve", lambda a, b: genesis.linalg.solve(a, b)),
    ("cholesky", lambda a, b: genesis.linalg.cholesky(a @ a.mT)),
])
def test_second_derivatives(rng, name, call):
    a, b = _matrix(rng, 2, 3, 3), genesis.from_numpy(rng.uniform(-1, 1, (2, 3, 2))).requires_grad_()
    assert gradgradcheck(call, (a, b), atol=1e-6, rtol=1e-5)


def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient():
    """The true derivative (finite differences agree); PyTorch 2.13 returns zeros here."""
    values = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2
    ours = genesis.from_numpy(values.copy()).requires_grad_()
    genesis.linalg.det(ours).backward()
    numerical = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            step = np.zeros((3, 3))
            step[i, j] = 1e-6
            numerical[i, j] = (np.linalg.det(values + step) - np.linalg.det(values - step)) / 2e-6
    np.testing.assert_allclose(ours.grad.numpy(), numerical, atol=1e-8)
    np.testing.assert_allclose(numerical, [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-8)


def test_logdet_is_nan_for_a_negative_determinant_and_minus_inf_for_zero():
    assert np.isnan(genesis.logdet(genesis.tensor([[0., 1.], [1., 0.]], dtype=genesis.float64)).item())
    assert genesis.logdet(genesis.zeros(2, 2, dtype=genesis.float64)).item() == -np.inf
    sign, logabs = genesis.slogdet(genesis.tensor([[0., 1.], [1., 0.]], dtype=genesis.float64))
    assert (sign.item(), logabs.item()) == (-1.0, 0.0) and not sign.requires_grad


@pytest.mark.parametrize("call, message", [
    (lambda: genesis.linalg.inv(genesis.zeros(2, 2)), "linalg.inv: the matrix is singular"),
    (lambda: genesis.linalg.cholesky(-genesis.eye(2)), "linalg.cholesky: the matrix is not positive definite"),
    (lambda: genesis.linalg.solve(genesis.zeros(2, 2), genesis.ones(2)), "linalg.solve: the matrix A is singular"),
    (lambda: genesis.linalg.det(genesis.ones(2, 3)), r"expected square matrices of shape \(..., n, n\), got \(2, 3\)"),
    (lambda: genesis.linalg.inv(genesis.eye(2).long()), "needs a floating point input, got int64"),
    (lambda: genesis.linalg.solve(genesis.eye(3), genesis.ones(2, 4)), r"needs B with 3 rows, got shape \(2, 4\)"),
    (lambda: genesis.linalg.solve(genesis.eye(2), genesis.ones(2, dtype=genesis.float64)), "A is float32 and B float64"),
])
def test_errors_name_the_op_and_the_problem(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_tensor_methods_and_top_level_names():
    a = genesis.tensor([[2., 0.], [0., 4.]])
    assert a.det().item() == 8.0 and a.inverse().tolist() == [[0.5, 0.0], [0.0, 0.25]]
    assert genesis.det is not None and genesis.inverse(a).shape == (2, 2)
    assert genesis.allclose(a.logdet(), genesis.tensor(np.log(8.0), dtype=genesis.float32))
