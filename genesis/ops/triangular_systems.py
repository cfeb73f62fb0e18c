"""Triangular solves and what is built on them, batched over leading dims as `torch.linalg`:
`linalg.solve_triangular`, `linalg.lu_factor`, `linalg.lu`, `linalg.lu_solve`, `linalg.inv_ex`,
`linalg.cholesky_ex`, and PyTorch's top-level `triangular_solve`, `cholesky_solve`,
`cholesky_inverse`, `lu`, `lu_unpack`, `lu_solve`.

Gradients, with G the incoming gradient:
  solve_triangular (X = A^-1 B):  B' = A^-T G, A' = -B' X^T kept to A's triangle (without
                                  the diagonal when unitriangular)
  lu (A = P L U, square A):       A' = P L^-T (tril(L^T L', -1) + triu(U' U^T)) U^-T
Everything else is a composition of these and plain ops, so its gradient is theirs (and
gradients of any order work). cholesky_solve and cholesky_inverse read only the named
triangle of the factor, as PyTorch's do, and give it the gradient of that triangle (PyTorch
also reports a gradient for the triangle it never reads). LU uses partial pivoting, done
column by column on the device's arrays, with pivots 1-based as LAPACK's.

>>> import genesis
>>> a = genesis.tensor([[2., 0.], [1., 4.]])
>>> genesis.linalg.solve_triangular(a, genesis.tensor([[2.], [5.]]), upper=False)
tensor([[1.],
        [1.]])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..creation import eye
from ..tensor import Tensor, wrap_array
from .gather import gather
from .linear_systems import cholesky, inverse
from .matrix import tril, triu
from .pad import pad
from .registry import OpInfo, Sample
from .where import where

__all__ = ["triangular_solve", "cholesky_solve", "cholesky_inverse", "lu", "lu_unpack",
           "lu_solve"]

triangular_solve_result = namedtuple("triangular_solve", ("solution", "cloned_coefficient"))
lu_factor_result = namedtuple("linalg_lu_factor", ("LU", "pivots"))
lu_result = namedtuple("linalg_lu", ("P", "L", "U"))
lu_unpack_result = namedtuple("lu_unpack", ("P", "L", "U"))
inv_ex_result = namedtuple("linalg_inv_ex", ("inverse", "info"))
cholesky_ex_result = namedtuple("linalg_cholesky_ex", ("L", "info"))


def check_matrices(op: str, name: str, a, square: bool = False) -> None:
    """`a` is a floating tensor of (batches of) matrices, square if asked; torch's errors."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(a).__name__}")
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got "
                           f"shape {tuple(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: {name} must be floating point, got {a.dtype.name}; convert "
                           "first with .float() or .double()")


def broadcast_batches(a: Tensor, b: Tensor) -> tuple:
    """a and b expanded to one batch shape (their last two dims kept)."""
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a = a.expand(batch + tuple(a.shape[-2:])) if tuple(a.shape[:-2]) != batch else a
    b = b.expand(batch + tuple(b.shape[-2:])) if tuple(b.shape[:-2]) != batch else b
    return a, b


def _triangle(xp, a, upper: bool, unitriangular: bool):
    part = xp.triu(a) if upper else xp.tril(a)
    if unitriangular:
        n = a.shape[-1]
        part = part * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    return part


class SolveTriangular(Op):
    """X with A X = B, reading only A's upper or lower triangle (and taking its diagonal as
    ones when unitriangular); A (..., n, n) and B (..., n, k) of one batch shape."""

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        xp = a._device.xp
        try:
            out = xp.linalg.solve(_triangle(xp, a._data, upper, unitriangular), b._data)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.solve_triangular: A has a zero on its diagonal, so it is "
                               "singular") from None
        ctx.upper, ctx.unitriangular = upper, unitriangular
        out = wrap_array(out, a._device)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        upper, unit = ctx.upper, ctx.unitriangular
        grad_b = SolveTriangular.apply(a.mT, grad, not upper, unit)
        grad_a = None
        if ctx.needs_input_grad[0]:
            full = -(grad_b @ out.mT)
            offset = (1 if upper else -1) if unit else 0
            grad_a = triu(full, offset) if upper else tril(full, offset)
        return grad_a, grad_b, None, None


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (X A = B with left=False) for a triangular A: only its upper (upper=True)
    or lower triangle is read, and its diagonal is taken as ones with unitriangular=True.
    Batch dims broadcast.

    >>> import genesis
    >>> a = genesis.tensor([[2., 1.], [0., 4.]])
    >>> genesis.linalg.solve_triangular(a, genesis.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    op = "linalg.solve_triangular"
    check_matrices(op, "A", A, square=True)
    check_matrices(op, "B", B)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{op}: A is {A.dtype.name} and B {B.dtype.name}; convert one so they "
                           "match")
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"{op}: A of shape {tuple(A.shape)} needs B with {A.shape[-1]} rows, "
                           f"got shape {tuple(B.shape)}")
    A, B = broadcast_batches(A, B)
    return SolveTriangular.apply(A, B, bool(upper), bool(unitriangular))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """PyTorch's older `torch.triangular_solve`: (X, a clone of A) with A X = b (A^T X = b
    with transpose=True); note b comes first.

    >>> import genesis
    >>> genesis.triangular_solve(genesis.tensor([[2.], [4.]]), genesis.tensor([[1., 0.], [0., 2.]])).solution
    tensor([[2.],
            [2.]])
    """
    b, A = autocast_inputs(FLOAT32_ON_CPU, b, A)
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(solution, A.clone())


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with A X = B, for A = L L^T given by its Cholesky factor L (A = U^T U with upper=True).

    >>> import genesis
    >>> L = genesis.tensor([[2., 0.], [1., 1.]])       # A = [[4, 2], [2, 2]]
    >>> genesis.cholesky_solve(genesis.tensor([[6.], [4.]]), L)
    tensor([[1.],
            [1.]])
    """
    B, L = autocast_inputs(FLOAT32_ON_CPU, B, L)
    check_matrices("cholesky_solve", "L", L, square=True)
    lower = L.mT if upper else L
    halfway = solve_triangular(lower, B, upper=False)
    return solve_triangular(lower.mT, halfway, upper=True)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of A = L L^T (A = U^T U with upper=True) from its Cholesky factor.

    >>> import genesis
    >>> genesis.cholesky_inverse(genesis.tensor([[2., 0.], [0., 1.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    L, = autocast_inputs(FLOAT32_ON_CPU, L)
    check_matrices("cholesky_inverse", "L", L, square=True)
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L._device).expand(tuple(L.shape))
    return cholesky_solve(identity, L, upper)


# -- LU -----------------------------------------------------------------------------------------
def lu_factor_arrays(xp, a) -> tuple:
    """(packed LU, 1-based int32 pivots, int32 info) of (..., m, n) arrays by partial pivoting,
    as LAPACK's getrf: info is the 1-based index of the first exactly zero pivot, 0 if none."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = a.reshape((-1, m, n)).copy()
    count = lu.shape[0]
    rows = xp.arange(count)
    pivots = xp.zeros((count, k), dtype=xp.int32)
    info = xp.zeros(count, dtype=xp.int32)
    for j in range(k):
        p = xp.argmax(xp.abs(lu[:, j:, j]), axis=-1) + j
        pivots[:, j] = p + 1
        row_j, row_p = lu[rows, j].copy(), lu[rows, p].copy()
        lu[rows, j], lu[rows, p] = row_p, row_j
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where(zero & (info == 0), j + 1, info).astype(xp.int32)
        lu[:, j + 1:, j] /= xp.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch))


def permutation_arrays(xp, pivots, m: int):
    """perm with A[perm] = L U (row perm[i] of A is row i of L U), from 1-based pivots."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    flat = (pivots.reshape((-1, k)) - 1).astype(xp.int64)
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(k):
        at_j, at_p = perm[rows, j].copy(), perm[rows, flat[:, j]].copy()
        perm[rows, j], perm[rows, flat[:, j]] = at_p, at_j
    return perm.reshape(batch + (m,))


def _unpack(lu_data: Tensor) -> tuple:
    m, n = lu_data.shape[-2:]
    k = min(m, n)
    unit = eye(m, k, dtype=lu_data.dtype, device=lu_data._device)
    lower = tril(lu_data, -1).narrow(-1, 0, k) + unit
    upper = triu(lu_data).narrow(-2, 0, k)
    return lower, upper


def _permutation_matrix(perm, m: int, dtype, device) -> Tensor:
    """P with P[perm[i], i] = 1 (so A = P L U)."""
    xp = device.xp
    matrix = (perm[..., None, :] == xp.arange(m)[:, None]).astype(dtype.numpy_dtype)
    return wrap_array(matrix, device)


class LUDecomposition(Op):
    """(P, L, U) with A = P L U, L unit lower triangular and U upper triangular, from the
    packed factors computed beforehand (`lu_factor_arrays`); P carries no gradient."""

    @staticmethod
    def forward(ctx, a, packed, pivots):
        xp, device = a._device.xp, a._device
        m, n = a.shape[-2:]
        k = min(m, n)
        lower = wrap_array(xp.tril(packed, -1)[..., :, :k] + xp.eye(m, k, dtype=packed.dtype), device)
        upper = wrap_array(xp.triu(packed)[..., :k, :], device)
        p = _permutation_matrix(permutation_arrays(xp, pivots, m), m, a.dtype, device)
        ctx.mark_non_differentiable(p)
        ctx.save_for_backward(p, lower, upper)
        return p, lower, upper

    @staticmethod
    def backward(ctx, _grad_p, grad_l, grad_u):
        p, lower, upper = ctx.saved_tensors
        if lower.shape[-2] != upper.shape[-1]:
            raise RuntimeError("linalg.lu: the gradient is implemented for square matrices only; "
                               "differentiate through a square A")
        inner = tril(lower.mT @ grad_l, -1) + triu(grad_u @ upper.mT)
        left = solve_triangular(lower.mT, inner, upper=True, unitriangular=True)
        return p @ solve_triangular(upper, left.mT, upper=True).mT, None, None


def _factor(op: str, A: Tensor, pivot: bool) -> tuple:
    """(P, L, U, pivots, info) of A, the first three differentiable (square A)."""
    check_matrices(op, "A", A)
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is only implemented on CUDA in PyTorch and "
                           "not in genesis; use pivot=True")
    packed, pivots, info = lu_factor_arrays(A._device.xp, A._data)
    p, lower, upper = LUDecomposition.apply(A, packed, pivots)
    return p, lower, upper, wrap_array(pivots, A._device), wrap_array(info, A._device)


def _packed(lower: Tensor, upper: Tensor) -> Tensor:
    """L (without its unit diagonal) and U in one (..., m, n) matrix."""
    m, k, n = lower.shape[-2], lower.shape[-1], upper.shape[-1]
    return pad(tril(lower, -1), (0, n - k)) + pad(upper, (0, 0, 0, m - k))


def lu_factor(A: Tensor, *, pivot: bool = True):
    """(LU, pivots): L below the diagonal (its unit diagonal implied) and U packed in one
    matrix, and the 1-based row swaps, as LAPACK's getrf. Differentiable for square A.

    >>> import genesis
    >>> genesis.linalg.lu_factor(genesis.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=genesis.int32)
    """
    _p, lower, upper, pivots, _info = _factor("linalg.lu_factor", A, pivot)
    return lu_factor_result(_packed(lower, upper), pivots)


def linalg_lu(A: Tensor, *, pivot: bool = True):
    """(P, L, U) with A = P L U: P a permutation, L unit lower triangular (m, k), U upper
    triangular (k, n), k = min(m, n). Differentiable for square A.

    >>> import genesis
    >>> P, L, U = genesis.linalg.lu(genesis.tensor([[1., 2.], [3., 4.]]))
    >>> P @ L @ U
    tensor([[1., 2.],
            [3., 4.]])
    """
    p, lower, upper, _pivots, _info = _factor("linalg.lu", A, pivot)
    return lu_result(p, lower, upper)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """PyTorch's older `torch.lu`: (LU, pivots), and the info tensor with get_infos=True.

    >>> import genesis
    >>> genesis.lu(genesis.tensor([[1., 2.], [3., 4.]]))[0]
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    _p, lower, upper, pivots, info = _factor("lu", A, pivot)
    packed = _packed(lower, upper)
    return (packed, pivots, info) if get_infos else (packed, pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True):
    """(P, L, U) from lu_factor's packed factors and pivots (differentiable in LU_data).

    >>> import genesis
    >>> LU, pivots = genesis.linalg.lu_factor(genesis.tensor([[1., 2.], [3., 4.]]))
    >>> P, L, U = genesis.lu_unpack(LU, pivots)
    >>> L
    tensor([[1.0000, 0.0000],
            [0.3333, 1.0000]])
    """
    check_matrices("lu_unpack", "LU_data", LU_data)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    lower = upper = p = None
    if unpack_data:
        lower = tril(LU_data, -1).narrow(-1, 0, k) + eye(m, k, dtype=LU_data.dtype,
                                                          device=LU_data._device)
        upper = triu(LU_data).narrow(-2, 0, k)
    if unpack_pivots:
        xp = LU_data._device.xp
        perm = permutation_arrays(xp, LU_pivots._data, m)
        p = _permutation_matrix(perm, m, LU_data.dtype, LU_data._device)
    empty = wrap_array(LU_data._device.xp.zeros(0, LU_data._data.dtype), LU_data._device)
    return lu_unpack_result(empty if p is None else p, empty if lower is None else lower,
                            empty if upper is None else upper)


def _permute_rows(b: Tensor, perm, inverse_: bool) -> Tensor:
    """b[perm] row by row of each batch (P^T b), or the inverse permutation's (P b)."""
    xp = b._device.xp
    if inverse_:
        perm = xp.argsort(perm, axis=-1)
    index = xp.broadcast_to(perm[..., :, None], tuple(b.shape[:-2]) + (perm.shape[-1], b.shape[-1]))
    return gather(b, -2, wrap_array(xp.ascontiguousarray(index), b._device))


def lu_solve_linalg(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """X with A X = B (A^T X = B with adjoint=True; X A = B with left=False) from lu_factor's
    (LU, pivots) of a square A; differentiable in LU and B.

    >>> import genesis
    >>> LU, pivots = genesis.linalg.lu_factor(genesis.tensor([[1., 2.], [3., 4.]]))
    >>> genesis.linalg.lu_solve(LU, pivots, genesis.tensor([[5.], [11.]]))
    tensor([[1.],
            [2.]])
    """
    op = "linalg.lu_solve"
    check_matrices(op, "LU", LU, square=True)
    check_matrices(op, "B", B)
    if not left:
        return lu_solve_linalg(LU, pivots, B.mT, adjoint=not adjoint).mT
    if B.shape[-2] != LU.shape[-1]:
        raise RuntimeError(f"{op}: LU of shape {tuple(LU.shape)} needs B with {LU.shape[-1]} rows, "
                           f"got shape {tuple(B.shape)}")
    LU, B = broadcast_batches(LU, B)
    xp = LU._device.xp
    perm = xp.broadcast_to(permutation_arrays(xp, pivots._data, LU.shape[-1]),
                           tuple(LU.shape[:-1]))
    if adjoint:  # A^T = U^T L^T P^T
        halfway = solve_triangular(LU.mT, B, upper=False)
        return _permute_rows(solve_triangular(LU.mT, halfway, upper=True, unitriangular=True),
                             perm, inverse_=True)
    halfway = solve_triangular(LU, _permute_rows(B, perm, inverse_=False), upper=False,
                               unitriangular=True)
    return solve_triangular(LU, halfway, upper=True)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """PyTorch's older `torch.lu_solve(b, LU_data, LU_pivots)`: X with A X = b.

    >>> import genesis
    >>> LU, pivots = genesis.linalg.lu_factor(genesis.tensor([[2., 0.], [0., 4.]]))
    >>> genesis.lu_solve(genesis.tensor([[2.], [4.]]), LU, pivots)
    tensor([[1.],
            [1.]])
    """
    b, LU_data = autocast_inputs(FLOAT32_ON_CPU, b, LU_data)
    return lu_solve_linalg(LU_data, LU_pivots, b)


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """(inverse, info): info is 0 for an invertible matrix and otherwise the 1-based index of
    the first zero pivot of its LU factorisation, where the inverse is NaN (PyTorch leaves
    unspecified values there). check_errors=True raises instead.

    >>> import genesis
    >>> genesis.linalg.inv_ex(genesis.tensor([[1., 2.], [2., 4.]])).info
    tensor(2, dtype=genesis.int32)
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    op = "linalg.inv_ex"
    check_matrices(op, "A", A, square=True)
    xp = A._device.xp
    _lu, _pivots, info = lu_factor_arrays(xp, A._data)
    singular = info != 0
    info_tensor = wrap_array(info, A._device)
    if not bool(singular.any()):
        return inv_ex_result(inverse(A), info_tensor)
    if check_errors:
        raise RuntimeError(f"{op}: The diagonal element {int(info.max())} is zero, the inversion "
                           "could not be completed because the input matrix is singular.")
    mask = wrap_array(singular[..., None, None], A._device)
    n = A.shape[-1]
    replaced = where(mask, eye(n, dtype=A.dtype, device=A._device), A)
    return inv_ex_result(where(mask, float("nan"), inverse(replaced)), info_tensor)


def _cholesky_info(xp, a):
    """1-based order of the first leading minor that is not positive definite, 0 if none
    (an unpivoted elimination reading the lower triangle, as LAPACK's potrf)."""
    n = a.shape[-1]
    work = xp.tril(a).reshape((-1, n, n))
    work = work + xp.tril(work, -1).swapaxes(-1, -2)
    info = xp.zeros(work.shape[0], dtype=xp.int32)
    for j in range(n):
        pivot = work[:, j, j]
        bad = ~(pivot > 0)
        info = xp.where(bad & (info == 0), j + 1, info).astype(xp.int32)
        safe = xp.where(bad, 1, pivot)
        work[:, j + 1:, j + 1:] -= work[:, j + 1:, j:j + 1] * work[:, j:j + 1, j + 1:] / safe[:, None, None]
    return info.reshape(a.shape[:-2])


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """(L, info): info is 0 where A is positive definite and otherwise the order of its first
    leading minor that is not, where L is NaN. check_errors=True raises instead.

    >>> import genesis
    >>> genesis.linalg.cholesky_ex(genesis.tensor([[1., 0.], [0., -1.]])).info
    tensor(2, dtype=genesis.int32)
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    op = "linalg.cholesky_ex"
    check_matrices(op, "A", A, square=True)
    info = _cholesky_info(A._device.xp, A._data)
    failed = info != 0
    info_tensor = wrap_array(info, A._device)
    if not bool(failed.any()):
        return cholesky_ex_result(cholesky(A, upper=upper), info_tensor)
    if check_errors:
        raise RuntimeError(f"{op}: The factorization could not be completed because the input is "
                           f"not positive-definite (the leading minor of order {int(info.max())} "
                           "is not positive-definite).")
    mask = wrap_array(failed[..., None, None], A._device)
    n = A.shape[-1]
    replaced = where(mask, eye(n, dtype=A.dtype, device=A._device), A)
    return cholesky_ex_result(where(mask, float("nan"), cholesky(replaced, upper=upper)),
                              info_tensor)


METHODS = {"triangular_solve": triangular_solve, "cholesky_solve": cholesky_solve,
           "cholesky_inverse": cholesky_inverse, "lu": lu, "lu_solve": lu_solve}


# -- registry -----------------------------------------------------------------------------------
def _triangular(rng, shape, upper):
    a = rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])
    return np.triu(a) if upper else np.tril(a)


def _positive_lower(a: Tensor) -> Tensor:
    """A lower-triangular factor with a diagonal kept away from zero, built from any a."""
    n = a.shape[-1]
    return tril(a) + 3 * eye(n, dtype=a.dtype, device=a._device)


def _torch_positive_lower(torch, a):
    return torch.tril(a) + 3 * torch.eye(a.shape[-1], dtype=a.dtype)


def _well_conditioned(rng, shape):
    return rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])


OPS = [
    OpInfo("solve_triangular", solve_triangular, lambda rng: [
        Sample((_triangular(rng, (3, 3), True), rng.uniform(-1, 1, (3, 2))), {"upper": True},
               note="upper"),
        Sample((_triangular(rng, (3, 3), False), rng.uniform(-1, 1, (2, 3, 2))), {"upper": False},
               note="lower, A broadcast"),
        Sample((rng.uniform(-1, 1, (2, 3, 3)), rng.uniform(-1, 1, (2, 3, 2))),
               {"upper": True, "unitriangular": True}, note="unitriangular, full A"),
        Sample((_triangular(rng, (3, 3), False), rng.uniform(-1, 1, (2, 3))),
               {"upper": False, "left": False}, note="X A = B"),
        Sample((_triangular(rng, (3, 3), True), rng.uniform(-1, 1, (3, 2))), {"upper": True},
               grad=(False, True), note="A needs no grad"),
        Sample((_triangular(rng, (3, 3), True), rng.uniform(-1, 1, (3, 2))), {"upper": True},
               layout="transposed", note="transposed")],
        torch=lambda torch, a, b, **kw: torch.linalg.solve_triangular(a, b, **kw)),
    OpInfo("triangular_solve", triangular_solve, lambda rng: [
        Sample((rng.uniform(-1, 1, (3, 2)), _triangular(rng, (3, 3), True)), note="upper"),
        Sample((rng.uniform(-1, 1, (3, 2)), _triangular(rng, (3, 3), False), False, True),
               note="lower, transposed")],
        torch=lambda torch, *args: tuple(torch.triangular_solve(*args))),
    OpInfo("cholesky_solve", lambda b, a, upper=False: cholesky_solve(
        b, _positive_lower(a).mT if upper else _positive_lower(a), upper), lambda rng: [
        Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 3))), note="lower"),
        Sample((rng.uniform(-1, 1, (2, 3, 2)), rng.uniform(-1, 1, (3, 3)), True), note="upper"),
        Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 3))), grad=(True, False),
               layout="transposed", note="factor needs no grad")],
        torch=lambda torch, b, a, upper=False: torch.cholesky_solve(
            b, _torch_positive_lower(torch, a).mT if upper else _torch_positive_lower(torch, a),
            upper)),
    OpInfo("cholesky_inverse", lambda a: cholesky_inverse(_positive_lower(a)), lambda rng: [
        Sample((rng.uniform(-1, 1, (3, 3)),), note="3x3"),
        Sample((rng.uniform(-1, 1, (2, 3, 3)),), layout="transposed", note="batch")],
        torch=lambda torch, a: torch.cholesky_inverse(_torch_positive_lower(torch, a))),
    OpInfo("linalg_lu", linalg_lu, lambda rng: [
        Sample((_well_conditioned(rng, (3, 3)),), note="3x3"),
        Sample((rng.uniform(-1, 1, (2, 4, 4)),), layout="transposed", note="batch")],
        torch=lambda torch, a: tuple(torch.linalg.lu(a))),
    OpInfo("lu_factor", lu_factor, lambda rng: [
        Sample((rng.uniform(-1, 1, (4, 4)),), note="4x4"),
        Sample((rng.uniform(-1, 1, (2, 3, 3)),), note="batch")],
        torch=lambda torch, a: tuple(torch.linalg.lu_factor(a))),
    OpInfo("lu_solve", lambda a, b, **kw: lu_solve_linalg(*lu_factor(a), b, **kw), lambda rng: [
        Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (3, 2))), note="plain"),
        Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (3, 2))), {"adjoint": True},
               note="adjoint"),
        Sample((_well_conditioned(rng, (2, 3, 3)), rng.uniform(-1, 1, (2, 3))), {"left": False},
               grad=(False, True), note="X A = B"),
        Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (2, 3, 2))), layout="transposed",
               note="A broadcast")],
        torch=lambda torch, a, b, **kw: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, **kw)),
    OpInfo("lu_unpack", lambda a: lu_unpack(a, lu_factor(a.detach()).pivots), lambda rng: [
        Sample((rng.uniform(-1, 1, (3, 3)),), note="square"),
        Sample((rng.uniform(-1, 1, (2, 4, 3)),), note="tall batch")],
        torch=lambda torch, a: tuple(torch.lu_unpack(a, torch.linalg.lu_factor(a.detach()).pivots))),
]
