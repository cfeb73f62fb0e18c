"""genesis.linalg's decompositions, triangular/LU solves and small functions: second
derivatives of every registered sample, the results' fields, info tensors, drivers and errors
against PyTorch (the registry checks values and first derivatives against PyTorch and finite
differences)."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck
from genesis.ops import decompositions, linalg_composites, matrix_functions, triangular_systems
from tests.helpers import outputs_of, torch_or_skip

CASES = [(info, sample) for family in (decompositions, matrix_functions, triangular_systems, linalg_composites)
         for info in family.OPS if info.differentiable
         for sample in info.samples(np.random.default_rng(1))]


@pytest.mark.parametrize("info, sample", CASES,
                         ids=[f"{info.name}-{sample.note}" for info, sample in CASES])
def test_second_derivatives_match_finite_differences(info, sample):
    args, kwargs = sample.tensors()

    def call(*arguments):
        return tuple(o for o in outputs_of(info.call(*arguments, **kwargs)) if o.requires_grad)

    assert gradgradcheck(call, args, atol=1e-6, rtol=1e-5)


def _double(rng, *shape):
    return genesis.from_numpy(rng.uniform(-1, 1, shape))


def test_svd_results_have_torch_fields_and_reconstruct(rng):
    a = _double(rng, 2, 4, 3)
    full = genesis.linalg.svd(a)
    assert (full.U.shape, full.S.shape, full.Vh.shape) == ((2, 4, 4), (2, 3), (2, 3, 3))
    u, s, vh = genesis.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a.numpy(), atol=1e-12)
    u, s, v = genesis.svd(a)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ v.mT).numpy(), a.numpy(), atol=1e-12)
    assert a.svd().V.shape == (2, 3, 3)


def test_svd_full_matrices_gradient_ignores_the_extra_columns_as_torch(rng):
    """PyTorch 2.13 does not raise for full_matrices=True on a non-square matrix: it uses the
    first min(m, n) columns of U (the rest are not determined by A)."""
    torch = torch_or_skip()
    values = rng.uniform(-1, 1, (4, 3))
    weight = rng.uniform(-1, 1, (4, 4))
    ours = genesis.from_numpy(values.copy()).requires_grad_()
    theirs = torch.tensor(values, requires_grad=True)
    u, _s, vh = genesis.linalg.svd(ours)
    (u[:, :3].abs() * genesis.from_numpy(weight[:, :3])).sum().backward()
    tu, _ts, _tvh = torch.linalg.svd(theirs)
    (tu.abs() * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


def test_svd_top_level_without_uv_gives_zero_factors(rng):
    torch = torch_or_skip()
    values = rng.uniform(-1, 1, (3, 2))
    ours = genesis.svd(genesis.from_numpy(values), compute_uv=False)
    theirs = torch.svd(torch.tensor(values), compute_uv=False)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), atol=1e-12)


def test_svdvals_gradient_is_finite_at_repeated_singular_values():
    """Only U diag(G) Vh is used when U and Vh get no gradient, as PyTorch."""
    a = genesis.eye(3, dtype=genesis.float64).requires_grad_()
    genesis.linalg.svdvals(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3), atol=1e-12)


def test_qr_modes_and_their_gradients_match_torch(rng):
    torch = torch_or_skip()
    values = rng.uniform(-1, 1, (4, 3))
    q, r = genesis.linalg.qr(genesis.from_numpy(values), mode="complete")
    assert (q.shape, r.shape) == ((4, 4), (4, 3))
    q, r = genesis.linalg.qr(genesis.from_numpy(values).requires_grad_(), mode="r")
    assert q.shape == (0,) and r.shape == (3, 3)
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    _q, r = genesis.linalg.qr(genesis.from_numpy(values).requires_grad_(), mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        genesis.linalg.qr(genesis.from_numpy(values), mode="x")
    with pytest.raises(RuntimeError):
        torch.linalg.qr(torch.tensor(values), mode="x")
    assert genesis.qr(genesis.from_numpy(values), some=False).Q.shape == (4, 4)


def test_eigh_reconstructs_and_reads_one_triangle(rng):
    values = rng.uniform(-1, 1, (3, 3))
    symmetric = values + values.T
    lower = genesis.linalg.eigh(genesis.from_numpy(np.tril(symmetric)))
    upper = genesis.linalg.eigh(genesis.from_numpy(np.triu(symmetric)), UPLO="U")
    np.testing.assert_allclose(lower.eigenvalues.numpy(), upper.eigenvalues.numpy(), atol=1e-12)
    v, w = lower.eigenvectors, lower.eigenvalues
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).numpy(), symmetric, atol=1e-12)
    np.testing.assert_allclose(genesis.linalg.eigvalsh(genesis.from_numpy(symmetric)).numpy(),
                               np.linalg.eigvalsh(symmetric), atol=1e-12)


def test_eigh_gradient_is_symmetric_as_torch(rng):
    torch = torch_or_skip()
    values = rng.uniform(-1, 1, (3, 3))
    values = values + values.T
    ours = genesis.from_numpy(values.copy()).requires_grad_()
    theirs = torch.tensor(values, requires_grad=True)
    v = genesis.linalg.eigh(ours).eigenvectors
    (v.abs() * v.abs()[0:1].detach()).sum().backward()
    tv = torch.linalg.eigh(theirs).eigenvectors
    (tv.abs() * tv.abs()[0:1].detach()).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


def test_pinv_of_a_rank_deficient_matrix_and_its_cutoffs():
    torch = torch_or_skip()
    values = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    for kwargs in ({}, {"rtol": 0.5}, {"atol": 100.0}, {"hermitian": False}):
        ours = genesis.linalg.pinv(genesis.from_numpy(values), **kwargs)
        theirs = torch.linalg.pinv(torch.tensor(values), **kwargs)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    ours = genesis.from_numpy(values.copy()).requires_grad_()
    theirs = torch.tensor(values, requires_grad=True)
    weight = np.arange(6.0).reshape(2, 3)
    (genesis.linalg.pinv(ours) * genesis.from_numpy(weight)).sum().backward()
    (torch.linalg.pinv(theirs) * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_fields_follow_torch_drivers(rng, driver):
    torch = torch_or_skip()
    a, b = rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (5, 2))
    ours = genesis.linalg.lstsq(genesis.from_numpy(a), genesis.from_numpy(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for mine, reference in zip(ours, theirs):
        assert mine.shape == tuple(reference.shape)
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), atol=1e-10)


def test_lstsq_errors_match_torch():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="size\\(-2\\) should match"):
        genesis.linalg.lstsq(genesis.ones(3, 2), genesis.ones(2, 2))
    with pytest.raises(RuntimeError):
        torch.linalg.lstsq(torch.ones(3, 2), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="driver"):
        genesis.linalg.lstsq(genesis.ones(3, 2), genesis.ones(3, 2), driver="lapack")


def test_matrix_rank_options_match_torch(rng):
    torch = torch_or_skip()
    values = np.diag([4.0, 1.0, 1e-3])
    for args, kwargs in (((), {}), ((0.01,), {}), ((), {"rtol": 0.5}), ((), {"atol": 2.0}),
                         ((), {"hermitian": True})):
        ours = genesis.linalg.matrix_rank(genesis.from_numpy(values), *args, **kwargs)
        theirs = torch.linalg.matrix_rank(torch.tensor(values), *args, **kwargs)
        assert ours.item() == theirs.item() and ours.dtype == genesis.int64


def test_matrix_exp_of_large_and_nilpotent_matrices_matches_torch(rng):
    torch = torch_or_skip()
    for values in (20 * rng.uniform(-1, 1, (3, 3)), np.triu(np.ones((4, 4)), 1), np.zeros((2, 2))):
        ours = genesis.matrix_exp(genesis.from_numpy(values))
        theirs = torch.matrix_exp(torch.tensor(values))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_lu_factor_pivots_and_infos_match_torch(rng):
    torch = torch_or_skip()
    values = rng.uniform(-1, 1, (2, 4, 3))
    values[1, :, 0] = 0.0  # a zero column: info 1 there
    ours = genesis.lu(genesis.from_numpy(values), get_infos=True)
    theirs = torch.linalg.lu_factor_ex(torch.tensor(values))
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), atol=1e-12)
    p, lower, upper = genesis.linalg.lu(genesis.from_numpy(values[0]))
    np.testing.assert_allclose((p @ lower @ upper).numpy(), values[0], atol=1e-12)


def test_lu_gradient_of_a_wide_matrix_is_refused_by_name(rng):
    a = _double(rng, 2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="square matrices only"):
        genesis.linalg.lu(a).U.sum().backward()


def test_inv_ex_and_cholesky_ex_infos_match_torch():
    torch = torch_or_skip()
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    ours, theirs = genesis.linalg.inv_ex(genesis.from_numpy(singular)), \
        torch.linalg.inv_ex(torch.tensor(singular))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    np.testing.assert_allclose(ours.inverse[1].numpy(), theirs.inverse[1].numpy())
    assert np.isnan(ours.inverse[0].numpy()).all()
    indefinite = np.array([[[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -1.0]], np.eye(3) * 4])
    ours, theirs = genesis.linalg.cholesky_ex(genesis.from_numpy(indefinite)), \
        torch.linalg.cholesky_ex(torch.tensor(indefinite))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    np.testing.assert_allclose(ours.L[1].numpy(), theirs.L[1].numpy())
    with pytest.raises(RuntimeError, match="singular"):
        genesis.linalg.inv_ex(genesis.from_numpy(singular), check_errors=True)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        genesis.linalg.cholesky_ex(genesis.from_numpy(indefinite), check_errors=True)


def test_triangular_solve_returns_a_clone_of_A(rng):
    a = genesis.from_numpy(np.triu(rng.uniform(-1, 1, (3, 3))) + 3 * np.eye(3))
    solution, clone = genesis.triangular_solve(genesis.ones(3, 1, dtype=genesis.float64), a)
    np.testing.assert_allclose((a @ solution).numpy(), np.ones((3, 1)), atol=1e-12)
    assert clone is not a and np.array_equal(clone.numpy(), a.numpy())


def test_cholesky_solve_and_inverse_invert_L_Lt(rng):
    lower = np.tril(rng.uniform(-1, 1, (3, 3))) + 3 * np.eye(3)
    gram = lower @ lower.T
    b = rng.uniform(-1, 1, (3, 2))
    x = genesis.cholesky_solve(genesis.from_numpy(b), genesis.from_numpy(lower))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(gram, b), atol=1e-12)
    upper = genesis.from_numpy(lower.T.copy())
    np.testing.assert_allclose(genesis.cholesky_inverse(upper, upper=True).numpy(),
                               np.linalg.inv(gram), atol=1e-12)


@pytest.mark.parametrize("ours, theirs", [
    (lambda g: g.linalg.svd(g.ones(3)), lambda t: t.linalg.svd(t.ones(3))),
    (lambda g: g.linalg.eigh(g.ones(3, 2)), lambda t: t.linalg.eigh(t.ones(3, 2))),
    (lambda g: g.linalg.eigh(g.eye(2), UPLO="X"), lambda t: t.linalg.eigh(t.eye(2), UPLO="X")),
    (lambda g: g.linalg.matrix_exp(g.ones(2, 3)), lambda t: t.linalg.matrix_exp(t.ones(2, 3))),
    (lambda g: g.linalg.pinv(g.ones(3)), lambda t: t.linalg.pinv(t.ones(3))),
    (lambda g: g.linalg.solve_triangular(g.eye(3), g.ones(3), upper=True),
     lambda t: t.linalg.solve_triangular(t.eye(3), t.ones(3), upper=True)),
    (lambda g: g.linalg.cross(g.ones(2), g.ones(2)), lambda t: t.linalg.cross(t.ones(2), t.ones(2))),
    (lambda g: g.linalg.multi_dot([g.ones(2, 2)]), lambda t: t.linalg.multi_dot([t.ones(2, 2)])),
    (lambda g: g.linalg.norm(g.ones(2, 2, 2), 2), lambda t: t.linalg.norm(t.ones(2, 2, 2), 2)),
    (lambda g: g.linalg.svd(g.ones(2, 2).long()), lambda t: t.linalg.svd(t.ones(2, 2).long())),
])
def test_errors_have_torch_types(ours, theirs):
    torch = torch_or_skip()
    with pytest.raises(Exception) as reference:
        theirs(torch)
    with pytest.raises(type(reference.value)):
        ours(genesis)


def test_tensor_methods_are_bound(rng):
    a = _double(rng, 3, 3) + 3 * genesis.eye(3, dtype=genesis.float64)
    assert a.svd().S.shape == (3,) and a.qr().R.shape == (3, 3)
    np.testing.assert_allclose(a.pinverse().numpy(), np.linalg.inv(a.numpy()), atol=1e-10)
    np.testing.assert_allclose(a.matrix_exp().numpy(), genesis.linalg.matrix_exp(a).numpy())
    lower = genesis.from_numpy(np.tril(a.numpy()))
    b = _double(rng, 3, 2)
    np.testing.assert_allclose(b.cholesky_solve(lower).numpy(),
                               genesis.cholesky_solve(b, lower).numpy())
    LU, pivots = a.lu()
    np.testing.assert_allclose(b.lu_solve(LU, pivots).numpy(), np.linalg.solve(a.numpy(), b.numpy()),
                               atol=1e-12)
