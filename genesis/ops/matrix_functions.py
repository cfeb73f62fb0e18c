"""Functions of matrices built on decompositions, batched over leading dims as `torch.linalg`:
`pinv`, `lstsq`, `matrix_rank`, `matrix_exp`; and PyTorch's top-level `pinverse` and
`matrix_exp`.

Gradients:
  pinv:       PyTorch's formula in pinv(A) and A (below), exact where the rank does not change
  lstsq:      that of pinv(A) B
  matrix_exp: A' is the upper right block of exp([[A^T, G], [0, A^T]])
The backwards are written with ops, so gradients of any order work.

>>> import genesis
>>> genesis.linalg.matrix_rank(genesis.tensor([[1., 2.], [2., 4.]]))
tensor(1)
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from .decompositions import run_lapack
from .join import cat
from .registry import OpInfo, Sample
from .triangular_systems import check_matrices

__all__ = ["pinverse", "matrix_exp"]  # PyTorch's top-level names

lstsq_result = namedtuple("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _cutoff(xp, magnitudes, atol, rtol, m: int, n: int, dtype):
    """max(atol, rtol * largest) per matrix, with PyTorch's default rtol eps * max(m, n) when
    neither is given."""
    if rtol is None:
        rtol = np.finfo(dtype).eps * max(m, n) if atol is None or atol == 0 else 0.0
    largest = magnitudes.max(axis=-1, keepdims=True) if magnitudes.shape[-1] else \
        xp.zeros(magnitudes.shape[:-1] + (1,), dtype)
    return xp.maximum(0.0 if atol is None else atol, rtol * largest)


class PseudoInverse(Op):
    """The Moore-Penrose inverse from an SVD (an eigendecomposition when hermitian), singular
    values at or under the cutoff taken as zero."""

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        xp = a._device.xp
        m, n = a.shape[-2:]
        if hermitian:
            values, vectors = run_lapack("linalg.pinv", xp.linalg.eigh, a)
            keep = xp.abs(values) > _cutoff(xp, xp.abs(values), atol, rtol, m, n, a._data.dtype)
            inverted = xp.where(keep, 1 / xp.where(keep, values, 1), 0)
            out = (vectors * inverted[..., None, :]) @ vectors.swapaxes(-1, -2)
        else:
            u, s, vh = run_lapack("linalg.pinv", lambda x: xp.linalg.svd(x, full_matrices=False), a)
            keep = s > _cutoff(xp, s, atol, rtol, m, n, a._data.dtype)
            inverted = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
            out = (vh.swapaxes(-1, -2) * inverted[..., None, :]) @ u.swapaxes(-1, -2)
        out = wrap_array(out, a._device)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, pinv_a = ctx.saved_tensors
        m, n = a.shape[-2:]
        pinv_t, grad_t = pinv_a.mT, grad.mT
        if m <= n:
            k = grad_t @ pinv_a
            k_pinv_t = k @ pinv_t
            out = -(pinv_a @ k).mT + k_pinv_t - (a @ pinv_a) @ k_pinv_t \
                + (pinv_t @ pinv_a) @ (grad_t - k @ a)
        else:
            k = pinv_a @ grad_t
            pinv_t_k = pinv_t @ k
            out = -(k @ pinv_a).mT + (grad_t - a @ k) @ pinv_a @ pinv_t + pinv_t_k \
                - pinv_t_k @ pinv_a @ a
        return out, None, None, None


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The pseudo-inverse: singular values at or under max(atol, rtol * largest) count as zero
    (rtol defaults to eps * max(m, n) when atol is not given, as PyTorch). hermitian=True
    reads A as symmetric (its lower triangle) and uses an eigendecomposition.

    >>> import genesis
    >>> genesis.linalg.pinv(genesis.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.pinv", "A", A, square=hermitian)
    return PseudoInverse.apply(A, atol, rtol, bool(hermitian))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """PyTorch's top-level `torch.pinverse`: pinv with rtol=rcond.

    >>> import genesis
    >>> genesis.pinverse(genesis.tensor([[4.]]))
    tensor([[0.2500]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    check_matrices("pinverse", "input", input)
    return PseudoInverse.apply(input, None, rcond, False)


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B|| as PyTorch's CPU drivers:
    'gelsy' (the default) gives the solution and rank, residuals and singular values empty;
    'gelsd'/'gelss' add the singular values, and the squared residuals when m > n and A has full
    rank; 'gels' gives the solution and (m > n) the residuals, A taken as full rank. The solution is pinv(A) B (differentiable), which
    is gelsy's for a full-rank A.

    >>> import genesis
    >>> A = genesis.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> genesis.linalg.lstsq(A, genesis.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.],
            [2.]])
    """
    A, B = autocast_inputs(FLOAT32_ON_CPU, A, B)
    with outside_autocast():  # in float32 throughout, its products included
        return _lstsq(A, B, rcond, driver)


def _lstsq(A: Tensor, B: Tensor, rcond, driver):
    op = "torch.linalg.lstsq"
    check_matrices(op, "A", A)
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss), got {driver!r}")
    if not isinstance(B, Tensor) or B.ndim > A.ndim or A.ndim - B.ndim > 1:
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1; A is {tuple(A.shape)} and B "
                           f"{tuple(getattr(B, 'shape', ()))}")
    vector = B.ndim == A.ndim - 1
    columns = B.unsqueeze(-1) if vector else B
    check_matrices(op, "B", columns)
    if columns.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2); A is "
                           f"{tuple(A.shape)} and B {tuple(B.shape)}")
    m, n = A.shape[-2:]
    xp = A._device.xp
    solution = PseudoInverse.apply(A, None, rcond, False) @ columns
    empty = wrap_array(xp.zeros((0,), A._data.dtype), A._device)
    rank, values = wrap_array(xp.zeros((0,), xp.int64), A._device), empty
    residuals = empty
    full_rank = True
    if driver != "gels":
        s = xp.linalg.svd(A._data, compute_uv=False)
        rank = wrap_array((s > _cutoff(xp, s, None, rcond, m, n, A._data.dtype)).sum(-1), A._device)
        full_rank = bool((rank._data == n).all())
        if driver != "gelsy":
            values = wrap_array(s, A._device)
    if driver != "gelsy" and m > n and full_rank:
        residuals = ((A @ solution - columns) ** 2).sum(-2)
    return lstsq_result(solution.squeeze(-1) if vector else solution,
                        residuals.squeeze(-1) if vector and residuals.ndim else residuals,
                        rank, values)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values over max(atol, rtol * largest) (eigenvalue magnitudes
    when hermitian), as int64; `tol` is the older spelling of atol.

    >>> import genesis
    >>> genesis.linalg.matrix_rank(genesis.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
    """
    A, = autocast_inputs(FLOAT32_ON_CPU, A)
    check_matrices("linalg.matrix_rank", "A", A, square=hermitian)
    atol = tol if atol is None else atol
    xp = A._device.xp
    m, n = A.shape[-2:]
    if hermitian:
        s = xp.abs(xp.linalg.eigvalsh(A._data))
    else:
        s = xp.linalg.svd(A._data, compute_uv=False)
    kept = s > _cutoff(xp, s, atol, rtol, m, n, A._data.dtype)
    return wrap_array(kept.sum(-1).astype(xp.int64), A._device)


def _exp_arrays(xp, a):
    """exp(a) by scaling and squaring: a Taylor series of a / 2^s with norm <= 1/2."""
    n = a.shape[-1]
    norm = float(xp.abs(a).sum(-1).max()) if a.size else 0.0
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    scaled = a / 2.0 ** squarings
    term = xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape)
    result = term.copy()
    for k in range(1, 19):
        term = term @ scaled / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result


class MatrixExponential(Op):
    """exp(A) = sum A^k / k! for each square matrix."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap_array(_exp_arrays(a._device.xp, a._data), a._device)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        a_t = a.mT.expand(tuple(grad.shape))
        block = cat([cat([a_t, grad], -1), cat([a_t * 0, a_t], -1)], -2)
        return MatrixExponential.apply(block).narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix.

    >>> import genesis
    >>> genesis.linalg.matrix_exp(genesis.tensor([[0., 1.], [0., 0.]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    check_matrices("linalg.matrix_exp", "A", A, square=True)
    return MatrixExponential.apply(A)


METHODS = {"pinverse": pinverse, "matrix_exp": matrix_exp}


# -- registry -----------------------------------------------------------------------------------
def _v(rng, shape):
    return rng.uniform(-1, 1, shape)


def _square(rng, shape):
    """Well conditioned: 2 added on the (leading) diagonal."""
    return rng.uniform(-1, 1, shape) + 2 * np.eye(*shape[-2:])


OPS = [
    OpInfo("pinv", pinv, lambda rng: [
        Sample((_v(rng, (4, 3)),), note="tall"),
        Sample((_v(rng, (2, 3, 4)),), note="wide batch"),
        Sample((_square(rng, (3, 3)),), layout="transposed", note="square, transposed")],
        torch=lambda torch, a: torch.linalg.pinv(a)),
    OpInfo("pinv_hermitian", lambda a: pinv(a + a.mT, hermitian=True), lambda rng: [
        Sample((_square(rng, (3, 3)),), note="symmetric")],
        torch=lambda torch, a: torch.linalg.pinv(a + a.mT, hermitian=True)),
    OpInfo("pinverse", pinverse, lambda rng: [Sample((_v(rng, (3, 2)),), note="tall")],
           torch=lambda torch, a: torch.pinverse(a)),
    OpInfo("lstsq", lambda a, b: lstsq(a, b).solution, lambda rng: [
        Sample((_v(rng, (4, 3)), _v(rng, (4, 2))), note="tall"),
        Sample((_square(rng, (2, 3, 3)), _v(rng, (2, 3, 1))), note="square batch"),
        Sample((_square(rng, (2, 4, 3)), _v(rng, (1, 4, 2))), note="B broadcast"),
        Sample((_v(rng, (4, 3)), _v(rng, (4, 2))), grad=(False, True), layout="transposed",
               note="A needs no grad")],
        torch=lambda torch, a, b: torch.linalg.lstsq(a, b).solution),
    OpInfo("matrix_rank", matrix_rank, lambda rng: [
        Sample((_v(rng, (3, 4)),), note="full rank"),
        Sample((np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5]),), note="rank 1")],
        differentiable=False, torch=lambda torch, a: torch.linalg.matrix_rank(a)),
    OpInfo("matrix_exp", matrix_exp, lambda rng: [
        Sample((_v(rng, (3, 3)),), note="small norm"),
        Sample((3 * _v(rng, (2, 3, 3)),), note="batch, squarings"),
        Sample((_v(rng, (3, 3)),), layout="transposed", note="transposed")],
        torch=lambda torch, a: torch.linalg.matrix_exp(a)),
]
