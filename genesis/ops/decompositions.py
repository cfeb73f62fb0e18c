"""Matrix decompositions, batched over leading dims as `torch.linalg`: `svd`, `svdvals`, `qr`,
`eigh`, `eigvalsh`; and PyTorch's top-level `svd` (V, not Vh) and `qr`. (eig and eigvals are
left out: their results are complex, and genesis has no complex dtype.)

Gradients (PyTorch's), with G_X the incoming gradient of output X, V = Vh^T, skew(X) = X - X^T:
  svd (reduced, k = min(m, n)), F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it:
        A' = U [F o skew(U^T G_U) S + diag(G_S) + S F o skew(V^T G_V)] Vh
             + (I - U U^T) G_U S^-1 Vh + U S^-1 G_V^T (I - V V^T)
        (only U diag(G_S) Vh when U and Vh get no gradient; full_matrices=True uses the
        first k columns of U and rows of Vh, as PyTorch)
  qr (m >= n): M = R G_R^T - G_Q^T Q, A' = (G_Q + Q copyltu(M)) R^-T, copyltu(M) the
        symmetric matrix from M's lower triangle; m < n splits A = [X | Y] as PyTorch
  eigh: A' = V (diag(G_L) + E o skew(V^T G_V) / 2) V^T, E_ij = 1 / (l_j - l_i) off the diagonal
The backwards are written with ops, so gradients of any order work. They are undefined
where singular values or eigenvalues repeat (as in PyTorch).

>>> import genesis
>>> a = genesis.tensor([[3., 0.], [0., -2.]])
>>> genesis.linalg.svdvals(a)
tensor([3., 2.])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..creation import eye
from ..tensor import Tensor, wrap_array
from .join import cat
from .linear_systems import off_diagonal_mask
from .matrix import tril
from .matrix_composites import diag_embed
from .registry import OpInfo, Sample
from .triangular_systems import check_matrices, solve_triangular

__all__ = ["svd", "qr"]  # PyTorch's top-level names

svd_result = namedtuple("linalg_svd", ("U", "S", "Vh"))
torch_svd_result = namedtuple("svd", ("U", "S", "V"))
qr_result = namedtuple("qr", ("Q", "R"))
eigh_result = namedtuple("linalg_eigh", ("eigenvalues", "eigenvectors"))


def run_lapack(op: str, compute, a: Tensor):
    """`compute` on a's array; NumPy's LinAlgError becomes a RuntimeError naming the op."""
    try:
        return compute(a._data)
    except np.linalg.LinAlgError as error:
        raise RuntimeError(f"{op}: the algorithm failed to converge ({error})") from None


def _off_diagonal_reciprocal(values: Tensor) -> Tensor:
    """1 / (v_j - v_i) at (i, j), 0 on the diagonal: a formula of ops (differentiable)."""
    n = values.shape[-1]
    identity = eye(n, dtype=values.dtype, device=values._device)
    return (1 / (values.unsqueeze(-2) - values.unsqueeze(-1) + identity)) * (1 - identity)


def _skew(x: Tensor) -> Tensor:
    return x - x.mT


class SingularValueDecomposition(Op):
    """(U, S, Vh) with A = U diag(S) Vh, S descending."""

    @staticmethod
    def forward(ctx, a, full_matrices):
        xp = a._device.xp
        u, s, vh = run_lapack("linalg.svd", lambda x: xp.linalg.svd(x, full_matrices=full_matrices), a)
        u, s, vh = (wrap_array(x, a._device) for x in (u, s, vh))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        m, n = u.shape[-2], vh.shape[-1]
        u, vh = u.narrow(-1, 0, k), vh.narrow(-2, 0, k)
        grad_u = None if grad_u is None else grad_u.narrow(-1, 0, k)
        grad_vh = None if grad_vh is None else grad_vh.narrow(-2, 0, k)
        if grad_u is None and grad_vh is None:
            return (u * grad_s.unsqueeze(-2)) @ vh, None
        inner = diag_embed(grad_s) if grad_s is not None else 0
        reciprocal = _off_diagonal_reciprocal(s * s)
        result = 0
        if grad_u is not None:
            inner = inner + reciprocal * _skew(u.mT @ grad_u) * s.unsqueeze(-2)
            if m > k:
                result = result + ((grad_u - u @ (u.mT @ grad_u)) / s.unsqueeze(-2)) @ vh
        if grad_vh is not None:
            inner = inner + s.unsqueeze(-1) * (reciprocal * _skew(vh @ grad_vh.mT))
            if n > k:
                result = result + (u / s.unsqueeze(-2)) @ (grad_vh - (grad_vh @ vh.mT) @ vh)
        return u @ inner @ vh + result, None


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, singular values S descending. With full_matrices=True
    (the default) U is (m, m) and Vh (n, n); the gradient then uses only their first
    min(m, n) columns/rows, as PyTorch's.

    >>> import genesis
    >>> genesis.linalg.svd(genesis.tensor([[0., 2.], [1., 0.]])).S
    tensor([2., 1.])
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.svd", "A", A)
    return svd_result(*SingularValueDecomposition.apply(A, bool(full_matrices)))


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values of A, descending (differentiable: U diag(G) Vh).

    >>> import genesis
    >>> genesis.linalg.svdvals(genesis.tensor([[0., 2.], [1., 0.]]))
    tensor([2., 1.])
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.svdvals", "A", A)
    return SingularValueDecomposition.apply(A, False)[1]


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """PyTorch's top-level `torch.svd`: (U, S, V) with A = U diag(S) V^T (V, not Vh); some=False
    gives square U and V; compute_uv=False gives zero U and V.

    >>> import genesis
    >>> genesis.svd(genesis.tensor([[0., 2.], [1., 0.]])).V.abs()
    tensor([[0., 1.],
            [1., 0.]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    check_matrices("svd", "A", input)
    if not compute_uv:
        s = svdvals(input)
        xp, (m, n) = input._device.xp, input.shape[-2:]
        batch = tuple(input.shape[:-2])
        zeros = (wrap_array(xp.zeros(batch + (m, m), input._data.dtype), input._device),
                 wrap_array(xp.zeros(batch + (n, n), input._data.dtype), input._device))
        return torch_svd_result(zeros[0], s, zeros[1])
    u, s, vh = SingularValueDecomposition.apply(input, not some)
    return torch_svd_result(u, s, vh.mT)


class QRDecomposition(Op):
    """(Q, R) with A = Q R, Q orthonormal columns, R upper triangular (LAPACK's signs)."""

    @staticmethod
    def forward(ctx, a, mode):
        xp = a._device.xp
        q, r = run_lapack("linalg.qr", lambda x: xp.linalg.qr(x, mode="complete" if mode == "complete"
                                                           else "reduced"), a)
        if mode == "r":
            q = xp.zeros((0,), r.dtype)
        q, r = wrap_array(q, a._device), wrap_array(r, a._device)
        ctx.mode, ctx.matrix_shape = mode, a.shape[-2:]
        ctx.save_for_backward(q, r)  # not A: PyTorch's rule reads Q and R only
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        q, r = ctx.saved_tensors
        m, n = ctx.matrix_shape
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                               "going to differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(q, r, grad_q, grad_r), None
        # A = [X | Y] with X square: X = Q R_X, Y = Q R_Y.
        r_x, r_y = r.narrow(-1, 0, m), r.narrow(-1, m, n - m)
        grad_r_x, grad_r_y = grad_r.narrow(-1, 0, m), grad_r.narrow(-1, m, n - m)
        grad_x = _qr_backward_tall(q, r_x, grad_q + q @ (r_y @ grad_r_y.mT), grad_r_x)
        return cat([grad_x, q @ grad_r_y], -1), None


def _qr_backward_tall(q: Tensor, r: Tensor, grad_q: Tensor, grad_r: Tensor) -> Tensor:
    m_matrix = r @ grad_r.mT - grad_q.mT @ q
    copied = tril(m_matrix) + tril(m_matrix, -1).mT
    right = grad_q + q @ copied  # right R^-T = (R^-1 right^T)^T
    return solve_triangular(r, right.mT, upper=True).mT


def linalg_qr(A: Tensor, mode: str = "reduced"):
    """(Q, R) with A = Q R: mode 'reduced' (Q (m, k), R (k, n), k = min(m, n)), 'complete'
    (Q (m, m)) or 'r' (R only; Q is empty and there is no gradient). Signs are LAPACK's.

    >>> import genesis
    >>> Q, R = genesis.linalg.qr(genesis.tensor([[3., 1.], [4., 2.]]))
    >>> genesis.allclose(Q @ R, genesis.tensor([[3., 1.], [4., 2.]]))
    True
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.qr", "A", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    return qr_result(*QRDecomposition.apply(A, mode))


def qr(input: Tensor, some: bool = True):
    """PyTorch's top-level `torch.qr`: linalg.qr with mode 'reduced' (some=True) or 'complete'.

    >>> import genesis
    >>> genesis.qr(genesis.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    return linalg_qr(input, "reduced" if some else "complete")


class SymmetricEigen(Op):
    """(eigenvalues ascending, eigenvectors) of a symmetric matrix, read from one triangle."""

    @staticmethod
    def forward(ctx, a, uplo):
        xp = a._device.xp
        values, vectors = run_lapack("linalg.eigh", lambda x: xp.linalg.eigh(x, UPLO=uplo), a)
        values, vectors = wrap_array(values, a._device), wrap_array(vectors, a._device)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def defined_gradients(args, kwargs) -> dict:
        """Off the diagonal the gradient is symmetric by definition (A is taken as symmetric,
        as in PyTorch), while the forward reads one triangle only: gradient checks, which
        nudge one element at a time, compare the diagonal alone."""
        return {0: off_diagonal_mask(args[0].shape[-1])}

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, vectors = ctx.saved_tensors
        inner = diag_embed(grad_values) if grad_values is not None else 0
        if grad_vectors is not None:
            inner = inner + 0.5 * _off_diagonal_reciprocal(values) * _skew(vectors.mT @ grad_vectors)
        return vectors @ inner @ vectors.mT, None


def _check_uplo(UPLO) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def eigh(A: Tensor, UPLO: str = "L"):
    """(eigenvalues, eigenvectors) of a symmetric A, eigenvalues ascending; only the lower
    (UPLO='L') or upper triangle is read. The gradient is symmetric, as PyTorch's.

    >>> import genesis
    >>> genesis.linalg.eigh(genesis.tensor([[2., 1.], [1., 2.]])).eigenvalues
    tensor([1., 3.])
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.eigh", "A", A, square=True)
    return eigh_result(*SymmetricEigen.apply(A, _check_uplo(UPLO)))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric A, ascending.

    >>> import genesis
    >>> genesis.linalg.eigvalsh(genesis.tensor([[2., 1.], [1., 2.]]))
    tensor([1., 3.])
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.eigvalsh", "A", A, square=True)
    return SymmetricEigen.apply(A, _check_uplo(UPLO))[0]


METHODS = {"svd": svd, "qr": qr}


# -- registry -----------------------------------------------------------------------------------
# Singular and eigen vectors are defined up to sign: the registered calls fix each column's sign
# (its largest entry positive; R's diagonal positive for QR), for genesis and torch alike.
def _signed_columns(u, *rows):
    """u's columns, and the matching rows of each of `rows`, with u's largest entry positive."""
    values = u.detach()
    signs = values.gather(-2, values.abs().argmax(-2, keepdim=True)).sign()
    return (u * signs,) + tuple(r * signs.mT for r in rows)


def _svd_fixed(a, full_matrices=True, svd_fn=None):
    u, s, vh = (svd_fn or linalg_svd)(a, full_matrices)
    u, vh = _signed_columns(u, vh)
    return u, s, vh


def _torch_svd_fixed(torch, a, full_matrices=True):
    return _svd_fixed(a, full_matrices, torch.linalg.svd)


def _top_svd_fixed(a, some=True, svd_fn=None):
    u, s, v = (svd_fn or svd)(a, some)
    u, vh = _signed_columns(u, v.mT)
    return u, s, vh.mT


def _qr_fixed(a, mode="reduced", qr_fn=None):
    q, r = (qr_fn or linalg_qr)(a, mode)
    signs = r.detach().diagonal(0, -2, -1).sign()
    return q * signs.unsqueeze(-2), r * signs.unsqueeze(-1)


def _eigh_fixed(a, UPLO="L", eigh_fn=None):
    values, vectors = (eigh_fn or eigh)(a + a.mT, UPLO)
    return values, _signed_columns(vectors)[0]


def _v(rng, shape):
    return rng.uniform(-1, 1, shape)


OPS = [
    OpInfo("linalg_svd", _svd_fixed, lambda rng: [
        Sample((_v(rng, (3, 3)),), note="square"),
        Sample((_v(rng, (4, 3)), False), note="tall, reduced"),
        Sample((_v(rng, (2, 3, 4)), False), note="wide batch, reduced"),
        Sample((_v(rng, (3, 3)),), layout="transposed", note="transposed")],
        torch=_torch_svd_fixed),
    OpInfo("svd", _top_svd_fixed, lambda rng: [
        Sample((_v(rng, (4, 3)),), note="tall"), Sample((_v(rng, (3, 3)), False), note="square")],
        torch=lambda torch, a, some=True: _top_svd_fixed(a, some, torch.svd)),
    OpInfo("svdvals", svdvals, lambda rng: [
        Sample((_v(rng, (3, 4)),), note="wide"),
        Sample((_v(rng, (2, 4, 3)),), layout="transposed", note="tall batch")],
        torch=lambda torch, a: torch.linalg.svdvals(a)),
    OpInfo("linalg_qr", _qr_fixed, lambda rng: [
        Sample((_v(rng, (4, 3)),), note="tall"),
        Sample((_v(rng, (2, 3, 3)),), note="square batch"),
        Sample((_v(rng, (3, 5)),), note="wide"),
        Sample((_v(rng, (3, 3)), "complete"), note="complete square"),
        Sample((_v(rng, (4, 3)),), layout="transposed", note="transposed")],
        torch=lambda torch, a, mode="reduced": _qr_fixed(a, mode, torch.linalg.qr)),
    OpInfo("qr", lambda a: _qr_fixed(a, "reduced", lambda x, _mode: qr(x)),
           lambda rng: [Sample((_v(rng, (4, 2)),), note="tall")],
           torch=lambda torch, a: _qr_fixed(a, "reduced", lambda x, _mode: torch.qr(x))),
    OpInfo("eigh", _eigh_fixed, lambda rng: [
        Sample((_v(rng, (3, 3)),), note="3x3"),
        Sample((_v(rng, (2, 4, 4)), "U"), note="batch, upper"),
        Sample((_v(rng, (3, 3)),), layout="transposed", note="transposed")],
        torch=lambda torch, a, UPLO="L": _eigh_fixed(a, UPLO, torch.linalg.eigh)),
    OpInfo("eigvalsh", lambda a: eigvalsh(a + a.mT), lambda rng: [
        Sample((_v(rng, (4, 4)),), note="4x4")],
        torch=lambda torch, a: torch.linalg.eigvalsh(a + a.mT)),
]
