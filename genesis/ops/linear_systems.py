"""Inverses, determinants, linear solves and Cholesky factors of square matrices, batched over
leading dims: `genesis.linalg` (inv, det, slogdet, solve, cholesky) and PyTorch's top-level
`inverse`, `det`, `logdet`, `slogdet`.

Gradients, with G the incoming gradient and A^-T the transposed inverse:
  inv:      -A^-T G A^-T
  det:      G adj(A)^T (= G det(A) A^-T; the adjugate comes from an SVD, so a singular
            matrix gets its true gradient too, where PyTorch 2.13 returns zeros)
  slogdet:  G A^-T for log|det A|; the sign gets none
  solve:    B' = A^-T G and A' = -B' X^T, for X = A^-1 B
  cholesky: S = L^-T Phi(L^T G) L^-1 and A' = (S + S^T) / 2, Phi keeping the lower triangle
            with its diagonal halved (A is taken as symmetric, as in PyTorch)
The backwards are written with ops, so gradients of any order work (det's second
derivative needs an invertible matrix). NumPy raises on a singular or non positive-definite
matrix, reported here with the op's name; CuPy returns nan there instead, as PyTorch's
`*_ex` functions do.

>>> import genesis
>>> a = genesis.tensor([[2., 1.], [1., 3.]], requires_grad=True)
>>> genesis.linalg.det(a).backward()       # d det / dA = adj(A)^T
>>> genesis.allclose(a.grad, genesis.tensor([[3., -1.], [-1., 2.]]))
True
"""
from __future__ import annotations

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from .matrix import tril
from .registry import OpInfo, Sample

__all__ = ["inverse", "det", "logdet", "slogdet"]  # PyTorch's top-level names


def _check_square(op: str, a) -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: expected square matrices of shape (..., n, n), got "
                           f"{tuple(a.shape)}")
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: needs a floating point input, got {a.dtype.name}; convert "
                           "first with .float() or .double()")


def _lapack(op: str, problem: str, compute, *tensors) -> Tensor:
    """`compute` on the tensors' arrays, as a tensor on their device; a LinAlgError becomes a
    RuntimeError naming the op and the `problem`."""
    try:
        out = compute(*(t._data for t in tensors))
    except np.linalg.LinAlgError as error:
        raise RuntimeError(f"{op}: {problem} ({error})") from None
    return wrap_array(out, tensors[0]._device)


class Inverse(Op):
    """A^-1 for each matrix."""

    @staticmethod
    def forward(ctx, a):
        out = _lapack("linalg.inv", "the matrix is singular, so it has no inverse",
                      a._device.xp.linalg.inv, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -(out.mT @ grad @ out.mT)


class Determinant(Op):
    """det(A) for each matrix."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a._device.xp.linalg.det(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        if grad_state.enabled:  # create_graph: a formula of ops (needs an invertible matrix)
            return grad.unsqueeze(-1).unsqueeze(-1) * det(a).unsqueeze(-1).unsqueeze(-1) \
                * inverse(a).mT
        adjugate = _adjugate(a._device.xp, a._data)
        return wrap_array(grad._data[..., None, None] * adjugate.swapaxes(-1, -2), a._device)


def _adjugate(xp, a):
    """adj(A) = det(U) det(V) V diag(prod of the other singular values) U^T, from A = U S V^T:
    defined for singular matrices too (det(A) A^-1 is not)."""
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones(s.shape[:-1] + (1,), s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, -1)[..., :-1]], axis=-1),
                               axis=-1), -1)
    signs = xp.linalg.det(u) * xp.linalg.det(vh)
    return (vh.swapaxes(-1, -2) * (before * after)[..., None, :]) @ u.swapaxes(-1, -2) \
        * signs[..., None, None]


class SignLogAbsDet(Op):
    """(sign(det A), log|det A|) for each matrix; only the second is differentiable."""

    @staticmethod
    def forward(ctx, a):
        sign, logabs = a._device.xp.linalg.slogdet(a._data)
        ctx.save_for_backward(a)
        sign = wrap_array(sign, a._device)
        ctx.mark_non_differentiable(sign)
        return sign, wrap_array(logabs, a._device)

    @staticmethod
    def backward(ctx, _sign_grad, grad):
        (a,) = ctx.saved_tensors
        return grad.unsqueeze(-1).unsqueeze(-1) * inverse(a).mT


class Solve(Op):
    """X with A X = B, for A (..., n, n) and B (..., n, k) of one batch shape."""

    @staticmethod
    def forward(ctx, a, b):
        out = _lapack("linalg.solve", "the matrix A is singular, so A X = B has no unique "
                      "solution", a._device.xp.linalg.solve, a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        grad_b = Solve.apply(a.mT, grad)
        return (-(grad_b @ out.mT) if ctx.needs_input_grad[0] else None), grad_b


def off_diagonal_mask(n: int) -> np.ndarray:
    """True off the diagonal of an n x n matrix: where a function of a symmetric matrix that
    reads one triangle has a gradient defined by symmetry rather than by its output."""
    return ~np.eye(n, dtype=bool)


class Cholesky(Op):
    """The lower-triangular L with L L^T = A, for A symmetric positive definite (only its
    lower triangle is read)."""

    @staticmethod
    def defined_gradients(args, kwargs) -> dict:
        """Off the diagonal the gradient is symmetric by definition (see off_diagonal_mask)."""
        return {0: off_diagonal_mask(args[0].shape[-1])}

    @staticmethod
    def forward(ctx, a):
        out = _lapack("linalg.cholesky", "the matrix is not positive definite",
                      a._device.xp.linalg.cholesky, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (factor,) = ctx.saved_tensors
        product = factor.mT @ grad
        halved = tril(product) - 0.5 * product * _identity_like(product)
        inverse_factor = inverse(factor)
        symmetric = inverse_factor.mT @ halved @ inverse_factor
        return 0.5 * (symmetric + symmetric.mT)


def _identity_like(matrices: Tensor) -> Tensor:
    n = matrices.shape[-1]
    return wrap_array(matrices._device.xp.eye(n, dtype=matrices._data.dtype), matrices._device)


# -- public functions -----------------------------------------------------------------------------
def inverse(input: Tensor) -> Tensor:
    """The inverse of each square matrix (`genesis.linalg.inv`).

    >>> import genesis
    >>> genesis.inverse(genesis.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    _check_square("linalg.inv", input)
    return Inverse.apply(input)


def det(input: Tensor) -> Tensor:
    """The determinant of each square matrix.

    >>> import genesis
    >>> genesis.det(genesis.tensor([[1., 2.], [3., 4.]]))
    tensor(-2.)
    """
    _check_square("linalg.det", input)
    return Determinant.apply(input)


def slogdet(input: Tensor) -> tuple:
    """(sign, log|det|) of each square matrix: the determinant without overflow.

    >>> import genesis
    >>> genesis.slogdet(genesis.tensor([[1., 2.], [3., 4.]]))
    (tensor(-1.), tensor(0.6931))
    """
    _check_square("linalg.slogdet", input)
    return SignLogAbsDet.apply(input)


def logdet(input: Tensor) -> Tensor:
    """log(det) of each square matrix: nan for a negative determinant, -inf for zero.

    >>> import genesis
    >>> genesis.logdet(genesis.tensor([[2., 0.], [0., 3.]]))
    tensor(1.7918)
    """
    _check_square("logdet", input)
    sign, logabs = SignLogAbsDet.apply(input)
    with np.errstate(invalid="ignore", divide="ignore"):
        return logabs + sign.log()


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (or X A = B with left=False). B is a matrix (..., n, k), or a vector
    (n,) or batch of vectors (..., n) as in PyTorch; batch dims broadcast.

    >>> import genesis
    >>> genesis.linalg.solve(genesis.tensor([[2., 0.], [0., 4.]]), genesis.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    A, B = autocast_inputs(FLOAT32_ON_CPU, A, B)
    _check_square("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve: B must be a Tensor, got {type(B).__name__}")
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    columns = B.unsqueeze(-1) if vector else B
    if columns.ndim < 2 or columns.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: A of shape {tuple(A.shape)} needs B with "
                           f"{A.shape[-1]} rows, got shape {tuple(B.shape)}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: A is {A.dtype.name} and B {B.dtype.name}; convert one "
                           "so they match")
    batch = np.broadcast_shapes(A.shape[:-2], columns.shape[:-2])
    A = A.expand(batch + A.shape[-2:]) if A.shape[:-2] != batch else A
    columns = columns.expand(batch + columns.shape[-2:]) if columns.shape[:-2] != batch else columns
    out = Solve.apply(A, columns)
    return out.squeeze(-1) if vector else out


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """The lower-triangular factor L of a symmetric positive-definite A = L L^T (the upper
    factor L^T with upper=True).

    >>> import genesis
    >>> genesis.linalg.cholesky(genesis.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    _check_square("linalg.cholesky", input)
    factor = Cholesky.apply(input)
    return factor.mT if upper else factor


METHODS = {"inverse": inverse, "det": det, "logdet": logdet, "slogdet": slogdet}


# -- registry -----------------------------------------------------------------------------------
def _well_conditioned(rng, shape) -> np.ndarray:
    """Random matrices kept away from singular: uniform values plus 4 on the diagonal."""
    return rng.uniform(-1, 1, shape) + 4 * np.eye(shape[-1])


def _square_samples(rng) -> list:
    return [Sample((_well_conditioned(rng, (3, 3)),), note="3x3"),
            Sample((_well_conditioned(rng, (2, 4, 4)),), note="batch of 4x4"),
            Sample((_well_conditioned(rng, (2, 3, 3)),), layout="transposed", note="transposed"),
            Sample((_well_conditioned(rng, (1, 1)) * -1,), note="1x1, negative")]


def _solve_samples(rng) -> list:
    return [Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (3, 2))), note="matrix B"),
            Sample((_well_conditioned(rng, (2, 3, 3)), rng.uniform(-1, 1, (3,))), note="vector B"),
            Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (2, 3, 4))),
                   note="B batched, A broadcast"),
            Sample((_well_conditioned(rng, (2, 3, 3)), rng.uniform(-1, 1, (2, 3))),
                   note="batch of vectors"),
            Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (3, 2))), grad=(False, True),
                   note="A needs no grad"),
            Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (2, 3))), {"left": False},
                   note="X A = B"),
            Sample((_well_conditioned(rng, (3, 3)), rng.uniform(-1, 1, (3, 2))), layout="transposed",
                   note="transposed")]


def _cholesky_of_gram(a: Tensor, upper: bool = False) -> Tensor:
    """cholesky of A A^T + n I: positive definite for any A, and symmetric in A's entries, so
    finite differences of A check the symmetric gradient."""
    n = a.shape[-1]
    return cholesky(a @ a.mT + n * _identity_like(a), upper=upper)


def _torch_cholesky_of_gram(torch, a, upper=False):
    n = a.shape[-1]
    return torch.linalg.cholesky(a @ a.mT + n * torch.eye(n, dtype=a.dtype), upper=upper)


OPS = [
    OpInfo("inverse", inverse, _square_samples, torch=lambda torch, a: torch.linalg.inv(a)),
    OpInfo("det", det, _square_samples, torch=lambda torch, a: torch.linalg.det(a)),
    OpInfo("slogdet", slogdet, _square_samples,
           torch=lambda torch, a: tuple(torch.linalg.slogdet(a))),
    OpInfo("logdet", logdet, lambda rng: [
        Sample((_well_conditioned(rng, (3, 3)),), note="3x3"),
        Sample((_well_conditioned(rng, (2, 4, 4)),), layout="transposed", note="batch")],
        torch=lambda torch, a: torch.logdet(a)),
    OpInfo("solve", solve, _solve_samples,
           torch=lambda torch, a, b, left=True: torch.linalg.solve(a, b, left=left)),
    OpInfo("cholesky", _cholesky_of_gram, lambda rng: [
        Sample((rng.uniform(-1, 1, (3, 3)),), note="3x3"),
        Sample((rng.uniform(-1, 1, (2, 4, 4)),), {"upper": True}, note="batch, upper"),
        Sample((rng.uniform(-1, 1, (3, 3)),), layout="transposed", note="transposed")],
        torch=_torch_cholesky_of_gram),
]
