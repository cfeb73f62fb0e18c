"""`lobpcg`: the k largest (or smallest) eigenpairs of a symmetric matrix A, or of the
generalized problem A x = l B x with B symmetric positive definite, as `torch.lobpcg`.

Genesis has no sparse tensors, so A is always dense, and the eigenpairs are computed exactly
(a symmetric eigendecomposition; for B, a Cholesky reduction L^-1 A L^-T to the standard
problem) instead of iterated: the iteration's arguments (X, n, iK, niter, tol, method,
tracker, ortho_*params) are checked as torch checks them and are otherwise not needed.

Gradient (PyTorch's, for B = None), from the k wanted pairs (D, U) alone, with
F_ij = 1 / (d_j - d_i) off the diagonal, P = I - U U^T and W's column j the solution in
range(P) of (d_j I - A) w = P G_U[:, j]:
  A' = U (diag(G_D) + F o skew(U^T G_U) / 2) U^T + (W U^T + U W^T) / 2
It stays finite where the eigenvalues left out repeat. It is written with ops, so gradients
of any order work.

>>> import genesis
>>> a = genesis.tensor([[2., 0., 0.], [0., 5., 0.], [0., 0., 1.]])
>>> genesis.lobpcg(a, k=1)[0]
tensor([5.])
"""
from __future__ import annotations

import operator

from ..autograd.function import Op
from ..creation import eye
from ..dtypes import float16, float32, float64
from ..tensor import Tensor, wrap_array
from .decompositions import _off_diagonal_reciprocal, _signed_columns, _skew, run_lapack
from .linear_systems import cholesky, solve
from .matrix_composites import diag_embed
from .registry import OpInfo, Sample
from .triangular_systems import solve_triangular

__all__ = ["lobpcg"]

_BACKWARD_WITH_B = ("lobpcg.backward does not support backward with B != I yet. (genesis "
                    "follows PyTorch here; for a gradient, reduce the problem yourself: "
                    "L = linalg.cholesky(B), C = L^-1 A L^-T by linalg.solve_triangular, "
                    "then lobpcg(C) and x = L^-T y)")


class SelectedEigenpairs(Op):
    """The `count` largest (or smallest) eigenpairs of a symmetric matrix, read from its lower
    triangle; eigenvalues largest first when `largest`, smallest first otherwise."""

    @staticmethod
    def forward(ctx, a, count, largest):
        xp = a._device.xp
        values, vectors = run_lapack("lobpcg", xp.linalg.eigh, a)
        if largest:
            values, vectors = values[..., ::-1], vectors[..., ::-1]
        values = xp.ascontiguousarray(values[..., :count])
        vectors = xp.ascontiguousarray(vectors[..., :count])
        values, vectors = wrap_array(values, a._device), wrap_array(vectors, a._device)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(a, values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        a, values, vectors = ctx.saved_tensors
        inner = diag_embed(grad_values) if grad_values is not None else 0
        if grad_vectors is None:
            return vectors @ inner @ vectors.mT, None, None
        inner = inner + 0.5 * _off_diagonal_reciprocal(values) * _skew(vectors.mT @ grad_vectors)
        complement = _complement_solutions(a, values, vectors, grad_vectors)
        return (vectors @ inner @ vectors.mT
                + 0.5 * (complement @ vectors.mT + vectors @ complement.mT)), None, None


def _complement_solutions(a: Tensor, values: Tensor, vectors: Tensor, grad: Tensor) -> Tensor:
    """W, column j the w in range(P) with (d_j I - A) w = P grad[:, j], P = I - U U^T.

    K_j = A - d_j I + alpha U U^T acts as A - d_j I on range(P) and maps each wanted
    eigenvector u_i to (d_i - d_j + alpha) u_i; with alpha = 3 |A|_F that is at least |A|_F,
    so K_j is invertible (as well conditioned as A - d_j I on range(P)) when d_j is not also a
    left-out eigenvalue, and w = -K_j^-1 P grad[:, j]. alpha does not change w, so it is
    taken as a constant."""
    m = a.shape[-1]
    identity = eye(m, dtype=a.dtype, device=a._device)
    scale = a.detach().square().sum((-2, -1), keepdim=True).sqrt()
    alpha = (3 * scale + (scale == 0).to(a.dtype)).unsqueeze(-3)
    projector = vectors @ vectors.mT
    shifted = (a.unsqueeze(-3) - values.unsqueeze(-1).unsqueeze(-1) * identity
               + alpha * projector.unsqueeze(-3))                       # (*, k, m, m)
    residual = grad - projector @ grad                                  # P G, (*, m, k)
    solutions = solve(shifted, residual.mT.unsqueeze(-1)).squeeze(-1)   # (*, k, m)
    return -solutions.mT


class GeneralizedEigenpairs(Op):
    """The eigenpairs of A x = l B x computed beforehand (`values`, `vectors`), as outputs of A
    and B: PyTorch has no derivative for lobpcg with B, and neither has genesis."""

    @staticmethod
    def forward(ctx, a, b, values, vectors):
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        raise ValueError(_BACKWARD_WITH_B)


def _symmetric(a: Tensor) -> Tensor:
    return (a + a.mT) / 2


def _generalized_pairs(a: Tensor, b: Tensor, count: int, largest: bool):
    """The eigenpairs of A x = l B x by the Cholesky reduction B = L L^T, C = L^-1 A L^-T:
    C y = l y and x = L^-T y (B-orthonormal, as LOBPCG's)."""
    lower = cholesky(b)
    reduced = solve_triangular(lower, solve_triangular(lower, a, upper=False).mT, upper=False)
    values, vectors = SelectedEigenpairs.apply(_symmetric(reduced), count, largest)
    return values, solve_triangular(lower.mT, vectors, upper=True)


def _checked_count(value, name: str) -> int:
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"lobpcg(): {name} must be an int, got {type(value).__name__}") from None
    if count < 0:
        raise RuntimeError(f"lobpcg(): Trying to create tensor with negative dimension {count}: "
                           f"{name} must be 0 or more")
    return count


def _check_arguments(A, B, X, k, n, tol, method, ortho_params):
    """torch's checks, in torch's order; returns (k, n)."""
    if A.ndim < 2:
        raise IndexError(f"lobpcg: tuple index out of range: A must be (*, m, m), got shape "
                         f"{tuple(A.shape)}")
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    if tol is None and A.dtype is float16:
        raise KeyError(f"lobpcg: no default tol for {A.dtype} (torch knows float32 and float64 "
                       "only): pass A as float32 or float64")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else _checked_count(k, "k")
    n = (k if n is None else _checked_count(n, "n")) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    if method is None or method == "ortho":
        for params in ortho_params:
            if params is not None:
                {}.update(params)  # torch's TypeError for anything not a mapping
    batch = tuple(A.shape[:-2])
    if X is not None and batch:
        if X.numel() != _product(batch) * X.shape[-2] * X.shape[-1]:
            raise RuntimeError(f"lobpcg: shape {list((_product(batch),) + tuple(X.shape[-2:]))} "
                               f"is invalid for input of size {X.numel()}: X must be "
                               f"{batch + (m, n)}")
        if X.shape[-2] != m:
            raise AssertionError(f"X_ shape mismatch: got {tuple(X.shape[-2:])}, expected {(m, n)}"
                                 f" (each matrix of X)")
    elif X is not None and (X.ndim != 2 or X.shape[-2] != m):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    if batch and k > n:
        raise RuntimeError(f"lobpcg: The expanded size of the tensor ({k}) must match the "
                           f"existing size ({n}): a batch gives k = {k} eigenpairs each, but "
                           f"X (or n) holds only {n}")
    if A.dtype is float16:
        raise NotImplementedError("lobpcg: \"cholesky_cpu\" not implemented for 'Half'")
    if A.dtype not in (float32, float64) or (B is not None and B.dtype != A.dtype):
        raise RuntimeError(f"lobpcg: A must be float32 or float64 and B of A's dtype, got A of "
                           f"{A.dtype}{'' if B is None else f' and B of {B.dtype}'} (torch stops "
                           "here with 'expected m1 and m2 to have the same dtype')")
    return k, n


def _product(shape) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker=None, ortho_iparams: dict | None = None, ortho_fparams: dict | None = None,
           ortho_bparams: dict | None = None):
    """The k largest (largest=True or None, eigenvalues descending) or smallest (largest=False,
    ascending) eigenpairs (D of shape (*, k), U of shape (*, m, k)) of a symmetric A (*, m, m),
    or of A x = l B x with B symmetric positive definite (U is then B-orthonormal). Batched.

    Computed exactly, on dense matrices (genesis has no sparse tensors): a symmetric
    eigendecomposition, after a Cholesky reduction when B is given. The arguments that steer
    PyTorch's iteration are checked as torch checks them but are not needed by an exact
    solve: X (an initial guess (*, m, n); it sets n), n, iK, niter, tol, method, tracker
    (never called) and ortho_iparams/fparams/bparams. As in torch, n (X's columns, or n,
    or k) must be at most m / 3, at most min(k, n) pairs come back, and when A or B requires
    grad, A is first replaced by (A + A^T) / 2, so that A.grad is symmetric. The gradient
    exists only without B (ValueError otherwise, as torch); eigenvectors are defined up to
    sign.

    >>> import genesis
    >>> a = genesis.tensor([[2., 1., 0.], [1., 2., 0.], [0., 0., 5.]])
    >>> values, vectors = genesis.lobpcg(a, k=1, largest=False)
    >>> values
    tensor([1.])
    >>> genesis.allclose(a @ vectors, vectors * values)
    True
    """
    grad = A.requires_grad or (B is not None and B.requires_grad)
    if grad:
        A = _symmetric(A)
        B = None if B is None else _symmetric(B)
    k, n = _check_arguments(A, B, X, k, n, tol, method,
                            (ortho_iparams, ortho_fparams, ortho_bparams))
    count, largest = min(k, n), True if largest is None else bool(largest)
    if B is None:
        return SelectedEigenpairs.apply(A if grad else _symmetric(A), count, largest)
    if not grad:
        return _generalized_pairs(_symmetric(A), _symmetric(B), count, largest)
    values, vectors = _generalized_pairs(A.detach(), B.detach(), count, largest)
    return GeneralizedEigenpairs.apply(A, B, values._data, vectors._data)


METHODS: dict = {}


# -- registry -----------------------------------------------------------------------------------
# Eigenvectors are defined up to sign: the registered calls make each column's largest entry
# positive, for genesis and torch alike (torch's reference is its exact linalg.eigh).
def _lobpcg_fixed(a, k=1, largest=True):
    values, vectors = lobpcg(a, k, largest=largest)
    return values, _signed_columns(vectors)[0]


def _torch_lobpcg_fixed(torch, a, k=1, largest=True):
    values, vectors = torch.linalg.eigh((a + a.mT) / 2)
    if largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values[..., :k], _signed_columns(vectors[..., :k])[0]


def _generalized(a, b, k=1, largest=True):
    values, vectors = lobpcg(a, k, b @ b.mT + 6 * eye(b.shape[-1], dtype=b.dtype, device=b.device),
                             largest=largest)
    return values, _signed_columns(vectors)[0]  # LAPACK and cuSOLVER may pick other signs


def _v(rng, shape):
    return rng.uniform(-1, 1, shape)


OPS = [
    OpInfo("lobpcg", _lobpcg_fixed, lambda rng: [
        Sample((_v(rng, (6, 6)), 2), note="6x6, k=2"),
        Sample((_v(rng, (2, 6, 6)), 1, False), note="batch, smallest"),
        Sample((_v(rng, (9, 9)), 3), layout="transposed", note="transposed, k=3")],
        torch=_torch_lobpcg_fixed),
    OpInfo("lobpcg_generalized", _generalized, lambda rng: [
        Sample((_v(rng, (6, 6)), _v(rng, (6, 6)), 2), note="with B: no derivative")],
        differentiable=False),
]
