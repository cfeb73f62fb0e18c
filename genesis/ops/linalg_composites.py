"""`torch.linalg`'s small functions, as compositions of genesis ops (their gradients are those
ops'): `cross`, `vecdot`, `multi_dot`, `diagonal`, `norm`, and `matrix_norm` with the
orders that need singular values (2, -2, 'nuc').

>>> import genesis
>>> genesis.linalg.vecdot(genesis.tensor([1., 2.]), genesis.tensor([3., 4.]))
tensor(11.)
"""
from __future__ import annotations

import math

from ..autocast_rules import FLOAT32_ON_CUDA, LOWER
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..tensor import Tensor
from ._operands import normalize_dim
from .arrangement import cross as _cross
from .composites import broadcast_shapes
from .decompositions import svdvals
from .matrix import diagonal as _diagonal
from .norm import matrix_norm as _matrix_norm
from .norm import vector_norm
from .registry import OpInfo, Sample

__all__: list = []  # torch.linalg names only, exported by genesis.linalg


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along `dim` (the last by default); batch dims broadcast.

    >>> import genesis
    >>> genesis.linalg.cross(genesis.tensor([1., 0., 0.]), genesis.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got "
                           f"{input.ndim} and {other.ndim}; unsqueeze one first")
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    return _cross(input.expand(shape), other.expand(shape), dim % len(shape))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along `dim` (batch dims broadcast).

    >>> import genesis
    >>> genesis.linalg.vecdot(genesis.ones(2, 3), genesis.tensor([1., 2., 3.]))
    tensor([6., 6.])
    """
    x, y = autocast_inputs(LOWER, x, y)
    if x.shape[dim] != y.shape[dim]:
        raise RuntimeError(f"linalg.vecdot: the vectors along dim {dim} differ in length: "
                           f"{x.shape[dim]} and {y.shape[dim]}")
    with outside_autocast():  # the sum stays in the lower dtype on CUDA too
        return (x * y).sum(dim)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices; the first may be a row vector (1-D) and the last a
    column vector (1-D), as PyTorch (multiplied left to right).

    >>> import genesis
    >>> genesis.linalg.multi_dot([genesis.tensor([1., 2.]), genesis.eye(2), genesis.tensor([3., 4.])])
    tensor(11.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for position, t in enumerate(tensors):
        allowed = (1, 2) if position in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {position} must be "
                               f"{'1D or 2D' if len(allowed) == 2 else '2D'}, got {t.ndim}D")
    result = tensors[0]
    for t in tensors[1:]:
        result = result @ t
    return result


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix in the last two dims (a view; `genesis.diagonal` with
    other defaults).

    >>> import genesis
    >>> genesis.linalg.diagonal(genesis.eye(2).expand(3, 2, 2))
    tensor([[1., 1.],
            [1., 1.],
            [1., 1.]])
    """
    return _diagonal(A, offset, dim1, dim2)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """`torch.linalg.matrix_norm` over the two `dim`s: 'fro'; 'nuc' (sum of singular values);
    2 / -2 (the largest / smallest singular value); 1 / -1, the largest / smallest column sum
    of |A|; inf / -inf, the largest / smallest row sum.

    >>> import genesis
    >>> genesis.linalg.matrix_norm(genesis.tensor([[3., 0.], [0., -4.]]), ord=2)
    tensor(4.)
    """
    op = "linalg.matrix_norm"
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"{op}: ord={ord!r} is not supported; use 'fro', 'nuc', 1, -1, 2, -2, "
                           "inf or -inf")
    if dtype is None:  # CUDA's autocast lists matrix_norm as float32 (unless given a dtype)
        A, = autocast_inputs(FLOAT32_ON_CUDA, A)
    if ord not in ("nuc", 2, -2):
        return _matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if not isinstance(dim, list | tuple) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a pair of dims, got {dim!r}")
    rows, columns = (normalize_dim(d, A.ndim, op) for d in dim)
    if rows == columns:
        raise RuntimeError(f"{op}: dim must name two different dims, got {tuple(dim)}")
    if dtype is not None:
        A = A.to(dtype)
    if not A.is_floating_point():
        raise RuntimeError(f"{op}: needs a floating point input, got {A.dtype.name}; convert "
                           "first with .float() or pass dtype=")
    values = svdvals(A.movedim((rows, columns), (-2, -1)))
    out = values.sum(-1) if ord == "nuc" else values.amax(-1) if ord == 2 else values.amin(-1)
    if keepdim:
        for d in sorted((rows, columns)):
            out = out.unsqueeze(d)
    return out


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """`torch.linalg.norm`: a vector norm when `dim` is an int or A is 1-D with ord given, a
    matrix norm when `dim` is a pair or A is 2-D with ord given; with ord=None, the 2-norm of
    A flattened (or over `dim`).

    >>> import genesis
    >>> genesis.linalg.norm(genesis.tensor([[3., 0.], [0., 4.]]))
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord={ord!r} is a matrix norm; give two dims or a "
                           "number for a vector norm")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


METHODS: dict = {}


def _v(rng, shape):
    return rng.uniform(-1, 1, shape)


OPS = [
    OpInfo("linalg_cross", cross, lambda rng: [
        Sample((_v(rng, (2, 3)), _v(rng, (1, 3))), note="broadcast"),
        Sample((_v(rng, (2, 4, 3)), _v(rng, (1, 1, 3))), note="batch broadcast"),
        Sample((_v(rng, (3, 2)), _v(rng, (3, 2))), {"dim": 0}, grad=(False, True), note="dim 0")],
        torch=lambda torch, a, b, **kw: torch.linalg.cross(a, b, **kw)),
    OpInfo("vecdot", vecdot, lambda rng: [
        Sample((_v(rng, (2, 3)), _v(rng, (3,))), note="broadcast"),
        Sample((_v(rng, (3, 2)), _v(rng, (3, 2))), {"dim": 0}, layout="transposed", note="dim 0")],
        torch=lambda torch, a, b, **kw: torch.linalg.vecdot(a, b, **kw)),
    OpInfo("multi_dot", lambda *ts: multi_dot(ts), lambda rng: [
        Sample((_v(rng, (3,)), _v(rng, (3, 4)), _v(rng, (4, 2)), _v(rng, (2,))), note="vectors"),
        Sample((_v(rng, (2, 3)), _v(rng, (3, 2))), grad=(True, False), note="two matrices")],
        torch=lambda torch, *ts: torch.linalg.multi_dot(ts)),
    OpInfo("linalg_diagonal", diagonal, lambda rng: [
        Sample((_v(rng, (2, 3, 4)),), {"offset": 1}, note="batch, offset 1")],
        torch=lambda torch, a, **kw: torch.linalg.diagonal(a, **kw)),
    OpInfo("linalg_matrix_norm", matrix_norm, lambda rng: [
        Sample((_v(rng, (3, 4)), "nuc"), note="nuc"),
        Sample((_v(rng, (2, 3, 4)), 2), note="2, batch"),
        Sample((_v(rng, (4, 2, 3)), -2, (0, 2), True), note="-2, dims (0, 2), keepdim")],
        torch=lambda torch, a, *args: torch.linalg.matrix_norm(a, *args)),
    OpInfo("linalg_norm", norm, lambda rng: [
        Sample((_v(rng, (2, 3, 4)),), note="flattened"),
        Sample((_v(rng, (3, 4)), math.inf), note="matrix inf"),
        Sample((_v(rng, (4,)), 3), note="vector 3"),
        Sample((_v(rng, (2, 3, 4)), 1, 2), note="vector over dim 2"),
        Sample((_v(rng, (2, 3, 4)), "fro", (0, 2)), note="matrix over (0, 2)")],
        torch=lambda torch, a, *args: torch.linalg.norm(a, *args)),
]
