"""genesis.lobpcg (torch.lobpcg as an exact dense solve): values against numpy.linalg.eigh and
torch.lobpcg, batches, largest True/False/None, the generalized problem with B, the argument
errors and their types against torch, first and second derivatives, the symmetric A.grad."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradcheck, gradgradcheck
from genesis.compat.scan import missing
from tests.helpers import torch_or_skip


def _spd(rng, *shape):
    """Symmetric positive definite matrices (*, m, m), as numpy float64."""
    a = rng.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _double(array, requires_grad=False):
    return genesis.tensor(array, dtype=genesis.float64, requires_grad=requires_grad)


def _same_up_to_sign(ours, reference, atol):
    """Columns equal up to each column's sign."""
    ours, reference = np.asarray(ours), np.asarray(reference)
    signs = np.sign(np.sum(ours * reference, axis=-2, keepdims=True))
    np.testing.assert_allclose(ours * signs, reference, atol=atol)


@pytest.mark.parametrize("largest", [True, False, None])
@pytest.mark.parametrize("shape, k", [((6, 6), 1), ((2, 9, 9), 3), ((2, 1, 7, 7), 2)])
def test_pairs_are_the_wanted_end_of_numpy_eigh(rng, shape, k, largest):
    a = _spd(rng, *shape)
    values, vectors = genesis.lobpcg(_double(a), k=k, largest=largest)
    assert values.shape == shape[:-2] + (k,) and vectors.shape == shape[:-1] + (k,)
    expected_values, expected_vectors = np.linalg.eigh(a)
    if largest is not False:
        expected_values, expected_vectors = expected_values[..., ::-1], expected_vectors[..., ::-1]
    np.testing.assert_allclose(values.numpy(), expected_values[..., :k], rtol=1e-12)
    _same_up_to_sign(vectors.numpy(), expected_vectors[..., :k], atol=1e-10)
    assert values.is_contiguous() and vectors.is_contiguous()


def test_float32_stays_float32_and_a_nonsymmetric_a_uses_its_symmetric_part(rng):
    a = rng.uniform(-1, 1, (6, 6))
    values, vectors = genesis.lobpcg(genesis.tensor(a, dtype=genesis.float32), k=2)
    assert values.dtype == genesis.float32 and vectors.dtype == genesis.float32
    symmetric = (a + a.T) / 2
    np.testing.assert_allclose(values.numpy(), np.linalg.eigvalsh(symmetric)[::-1][:2], rtol=1e-5)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape, k, n", [((9, 9), 2, None), ((2, 12, 12), 3, 4), ((12, 12), 2, 4)])
def test_matches_torch_lobpcg(rng, shape, k, n, largest):
    torch = torch_or_skip()
    a = _spd(rng, *shape)
    values, vectors = genesis.lobpcg(_double(a), k=k, n=n, largest=largest)
    torch.manual_seed(0)
    expected_values, expected_vectors = torch.lobpcg(torch.tensor(a), k=k, n=n, largest=largest,
                                                     tol=1e-10, niter=-1)
    np.testing.assert_allclose(values.numpy(), expected_values.numpy(), rtol=1e-8)
    _same_up_to_sign(vectors.numpy(), expected_vectors.numpy(), atol=1e-6)


def test_an_initial_x_sets_n_and_at_most_n_pairs_come_back(rng):
    torch = torch_or_skip()
    a = _spd(rng, 9, 9)
    guess = rng.standard_normal((9, 2))
    ours = genesis.lobpcg(_double(a), k=3, X=_double(guess))
    theirs = torch.lobpcg(torch.tensor(a), k=3, X=torch.tensor(guess), niter=5)
    assert ours[0].shape == tuple(theirs[0].shape) == (2,)
    assert ours[1].shape == tuple(theirs[1].shape) == (9, 2)


@pytest.mark.parametrize("largest", [True, False])
def test_generalized_problem_with_b(rng, largest):
    torch = torch_or_skip()
    a, b = _spd(rng, 2, 9, 9), _spd(rng, 2, 9, 9)
    values, vectors = genesis.lobpcg(_double(a), k=2, B=_double(b), largest=largest)
    u, d = vectors.numpy(), values.numpy()
    np.testing.assert_allclose(a @ u, b @ u * d[..., None, :], atol=1e-10)
    identities = np.broadcast_to(np.eye(2), (2, 2, 2))
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ b @ u, identities, atol=1e-10)
    torch.manual_seed(0)
    expected_values, expected_vectors = torch.lobpcg(torch.tensor(a), k=2, B=torch.tensor(b),
                                                     largest=largest, tol=1e-10, niter=-1)
    np.testing.assert_allclose(d, expected_values.numpy(), rtol=1e-8)
    _same_up_to_sign(u, expected_vectors.numpy(), atol=1e-6)


def _error_cases(rng):
    a = _spd(rng, 9, 9)
    return {
        "not square": lambda lib: lib.lobpcg(lib.tensor(a[:, :8])),
        "not square, requires grad":
            lambda lib: lib.lobpcg(lib.tensor(a[:, :8], requires_grad=True)),
        "one dimension": lambda lib: lib.lobpcg(lib.tensor(a[0])),
        "B of another shape": lambda lib: lib.lobpcg(lib.tensor(a), B=lib.tensor(a[:8, :8])),
        "m < 3 n from k": lambda lib: lib.lobpcg(lib.tensor(a), k=4),
        "m < 3 n from n": lambda lib: lib.lobpcg(lib.tensor(a), k=1, n=4),
        "m < 3 n from X": lambda lib: lib.lobpcg(lib.tensor(a), X=lib.tensor(a[:, :4])),
        "X rows": lambda lib: lib.lobpcg(lib.tensor(a), k=1, X=lib.tensor(a[:8, :2])),
        "X batched for a matrix":
            lambda lib: lib.lobpcg(lib.tensor(a), k=1, X=lib.tensor(a[None, :, :2])),
        "X batch size": lambda lib: lib.lobpcg(lib.tensor(np.stack([a, a])), k=1,
                                               X=lib.tensor(np.stack([a, a, a])[..., :2])),
        "X_ rows in a batch": lambda lib: lib.lobpcg(lib.tensor(np.stack([a, a])), k=1,
                                                     X=lib.tensor(np.stack([a, a])[:, :8, :2])),
        "k above n in a batch": lambda lib: lib.lobpcg(lib.tensor(np.stack([a, a])), k=3,
                                                       X=lib.tensor(np.stack([a, a])[..., :2])),
        "float k": lambda lib: lib.lobpcg(lib.tensor(a), k=1.0),
        "negative k": lambda lib: lib.lobpcg(lib.tensor(a), k=-1),
        "integer A": lambda lib: lib.lobpcg(lib.tensor(a).int(), k=1),
        "half A": lambda lib: lib.lobpcg(lib.tensor(a).half(), k=1),
        "half A with tol": lambda lib: lib.lobpcg(lib.tensor(a).half(), k=1, tol=1e-3),
        "ortho_iparams not a dict": lambda lib: lib.lobpcg(lib.tensor(a), k=1, ortho_iparams=5),
        "B not positive definite": lambda lib: lib.lobpcg(lib.tensor(a), k=1,
                                                          B=-lib.tensor(np.eye(9))),
    }


@pytest.mark.parametrize("case", list(_error_cases(np.random.default_rng(0))))
def test_errors_have_torchs_types(case):
    torch = torch_or_skip()
    call = _error_cases(np.random.default_rng(0))[case]
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(genesis)
    expected = next(kind for kind in type(theirs.value).__mro__ if kind.__module__ == "builtins")
    assert isinstance(ours.value, expected), (ours.value, theirs.value)


def test_messages_carry_torchs_phrases(rng):
    a = _double(_spd(rng, 9, 9))
    with pytest.raises(ValueError, match="LOBPCG algorithm is not applicable when the number of "
                                         r"A rows \(=9\) is smaller than 3 x"):
        genesis.lobpcg(a, k=4)
    with pytest.raises(AssertionError, match="A must be square"):
        genesis.lobpcg(a[:, :8])
    with pytest.raises(AssertionError, match="X shape mismatch"):
        genesis.lobpcg(a, X=a[:8, :2])


def test_the_iteration_arguments_are_accepted(rng):
    a = _double(_spd(rng, 9, 9))
    called = []
    values, _ = genesis.lobpcg(a, k=2, iK=genesis.eye(9, dtype=genesis.float64), niter=3, tol=1e-3,
                               method="basic", tracker=called.append, ortho_iparams=5)
    np.testing.assert_allclose(values.numpy(), np.linalg.eigvalsh(a.numpy())[::-1][:2], rtol=1e-12)
    assert called == []  # an exact solve has no iterations to report


def _sign_fixed(k, largest):
    def call(a):
        values, vectors = genesis.lobpcg(a, k=k, largest=largest)
        index = vectors.abs().argmax(-2, keepdim=True)
        return values, vectors * vectors.gather(-2, index).sign()
    return call


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape, k", [((6, 6), 1), ((2, 6, 6), 2), ((2, 2, 9, 9), 3)])
def test_first_and_second_derivatives(rng, shape, k, largest):
    a = rng.random(shape)
    a = _double(a @ np.swapaxes(a, -1, -2) / 10, requires_grad=True)
    call = _sign_fixed(k, largest)
    assert gradcheck(call, (a,))
    grads = (_double(rng.random(shape[:-2] + (k,)) / 100),
             _double(rng.random(shape[:-1] + (k,)) / 100))
    assert gradgradcheck(call, (a,), grads, atol=1e-4)


@pytest.mark.parametrize("largest", [True, False])
def test_a_grad_is_symmetric_and_matches_torch(rng, largest):
    torch = torch_or_skip()
    array = rng.uniform(-1, 1, (2, 9, 9))
    a = _double(array, requires_grad=True)
    values, vectors = _sign_fixed(2, largest)(a)
    (values.sum() + vectors.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), np.swapaxes(a.grad.numpy(), -1, -2), atol=1e-14)
    reference = torch.tensor(array, requires_grad=True)
    guess = torch.eye(9, 2, dtype=torch.float64).expand(2, 9, 2)
    d, u = torch.lobpcg(reference, k=2, X=guess, largest=largest, tol=1e-12, niter=-1)
    u = u * u.gather(-2, u.abs().argmax(-2, keepdim=True)).sign()
    (d.sum() + u.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), reference.grad.numpy(), atol=1e-6)


def test_gradient_is_finite_where_left_out_eigenvalues_repeat():
    torch = torch_or_skip()
    array = np.diag([5.0, 1, 1, 1, 1, 1])
    array[0, 1] = array[1, 0] = 0.3
    a = _double(array, requires_grad=True)
    values, vectors = genesis.lobpcg(a, k=1, X=genesis.eye(6, 1, dtype=genesis.float64))
    (values.sum() + vectors.sum()).backward()
    reference = torch.tensor(array, requires_grad=True)
    d, u = torch.lobpcg(reference, k=1, X=torch.eye(6, 1, dtype=torch.float64))
    (d.sum() + u.sum()).backward()
    assert np.isfinite(a.grad.numpy()).all()
    np.testing.assert_allclose(a.grad.numpy(), reference.grad.numpy(), atol=1e-6)


@pytest.mark.parametrize("which", ["A", "B"])
def test_backward_with_b_raises_value_error_as_torch(rng, which):
    torch = torch_or_skip()
    a, b = _spd(rng, 9, 9), _spd(rng, 9, 9)
    for lib in (torch, genesis):
        values, vectors = lib.lobpcg(lib.tensor(a, requires_grad=which == "A"), k=1,
                                     B=lib.tensor(b, requires_grad=which == "B"))
        assert values.requires_grad and vectors.requires_grad
        with pytest.raises(ValueError, match="lobpcg.backward does not support backward with B"):
            (values.sum() + vectors.sum()).backward()


def test_no_graph_without_requires_grad(rng):
    values, vectors = genesis.lobpcg(_double(_spd(rng, 6, 6)), k=1, B=_double(_spd(rng, 6, 6)))
    assert values.grad_fn is None and not vectors.requires_grad


def test_served_as_torch_lobpcg():
    assert missing("torch.lobpcg") is None
