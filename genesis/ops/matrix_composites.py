"""Matrix and vector products and helpers PyTorch offers beside matmul, written as
compositions of genesis ops (their gradients are those ops'): addmm, addbmm, baddbmm,
addmv, addr, mv, inner, dist, trace, diag_embed, diagflat, matrix_power."""
from __future__ import annotations

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU, LOWER, LOWER_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..creation import eye
from ..creation import tensor as make_tensor
from ..tensor import Tensor
from . import samples
from .composites import broadcast_shapes, tensordot
from .pad import pad
from .registry import OpInfo, Sample

__all__ = ["addmm", "addbmm", "baddbmm", "addmv", "addr", "mv", "inner", "dist", "trace",
           "diag_embed", "diagflat", "matrix_power"]


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha) -> Tensor:
    """beta * input + alpha * product; with beta 0 the input is not read (NaN in it does not
    spread), as in PyTorch."""
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled.expand(*broadcast_shapes(tuple(input.shape), tuple(scaled.shape)))
    return (input if beta == 1 else input * beta) + scaled


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2).

    >>> import genesis
    >>> addmm(genesis.ones(2, 2), genesis.eye(2), genesis.eye(2) * 3).tolist()
    [[4.0, 1.0], [1.0, 4.0]]
    """
    input, mat1, mat2 = autocast_inputs(LOWER, input, mat1, mat2)
    return _scaled_sum(input, mat1 @ mat2, beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    input, batch1, batch2 = autocast_inputs(LOWER, input, batch1, batch2)
    with outside_autocast():  # the sum over the batch stays in the lower dtype on CUDA too
        return _scaled_sum(input, (batch1 @ batch2).sum(0), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    input, batch1, batch2 = autocast_inputs(LOWER, input, batch1, batch2)
    return _scaled_sum(input, batch1 @ batch2, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    input, mat, vec = autocast_inputs(LOWER_ON_CUDA, input, mat, vec)
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * the outer product of vec1 and vec2."""
    input, vec1, vec2 = autocast_inputs(LOWER_ON_CUDA, input, vec1, vec2)
    return _scaled_sum(input, vec1.unsqueeze(1) * vec2.unsqueeze(0), beta, alpha)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """The matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a matrix and a vector, got shapes {tuple(input.shape)} and "
                           f"{tuple(vec.shape)}")
    input, vec = autocast_inputs(LOWER_ON_CUDA, input, vec)
    with outside_autocast():
        return input @ vec


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dims of both (a plain product for a 0-d one)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other."""
    return (input - other).norm(p)


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal."""
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, got shape {tuple(input.shape)}")
    return input.diagonal().sum()


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices in the last two dims whose diagonal at `offset` is the last dim of input.

    >>> import genesis
    >>> diag_embed(genesis.tensor([1, 2]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    if (dim1, dim2) != (-2, -1):
        raise NotImplementedError("diag_embed into other dims than the last two is not supported "
                                  "by genesis yet")
    count = input.shape[-1]
    size = count + abs(offset)
    placed = make_tensor(np.eye(count, size, max(offset, 0)), dtype=input.dtype, device=input._device)
    rows = input.unsqueeze(-1) * placed  # (..., count, size): row i holds input[i] at i + offset
    return pad(rows, (0, 0, 0, offset)) if offset >= 0 else pad(rows, (0, 0, -offset, 0))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix whose diagonal at `offset` is the flattened input."""
    return diag_embed(input.reshape(-1), offset)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """The matrix (or each of a batch) multiplied by itself n times (0: the identity;
    negative: powers of the inverse)."""
    if n == 0:
        return eye(input.shape[-1], dtype=input.dtype, device=input._device).expand(*input.shape)
    base = input if n > 0 else input.inverse()
    result = base
    for _ in range(abs(n) - 1):
        result = result @ base
    return result


METHODS = {"addmm": addmm, "addbmm": addbmm, "baddbmm": baddbmm, "addmv": addmv, "addr": addr,
           "mv": mv, "inner": inner, "dist": dist, "trace": trace, "diag_embed": diag_embed,
           "diagflat": diagflat, "matrix_power": matrix_power}


def _v(rng, shape):
    return samples.values(rng, shape)


OPS = [
    OpInfo("addmm", addmm, lambda rng: [
        Sample((_v(rng, (2, 3)), _v(rng, (2, 4)), _v(rng, (4, 3))), note="plain"),
        Sample((_v(rng, (3,)), _v(rng, (2, 4)), _v(rng, (4, 3))), {"beta": 0.5, "alpha": 2.0},
               note="broadcast input, scaled")],
        torch=lambda torch, *a, **k: torch.addmm(*a, **k)),
    OpInfo("baddbmm", baddbmm, lambda rng: [
        Sample((_v(rng, (2, 3, 2)), _v(rng, (2, 3, 4)), _v(rng, (2, 4, 2))), {"alpha": 0.5}, note="batched")],
        torch=lambda torch, *a, **k: torch.baddbmm(*a, **k)),
    OpInfo("addbmm", addbmm, lambda rng: [
        Sample((_v(rng, (3, 2)), _v(rng, (2, 3, 4)), _v(rng, (2, 4, 2))), note="summed batches")],
        torch=lambda torch, *a, **k: torch.addbmm(*a, **k)),
    OpInfo("addmv", addmv, lambda rng: [
        Sample((_v(rng, (3,)), _v(rng, (3, 4)), _v(rng, (4,))), {"beta": 2.0}, note="scaled input")],
        torch=lambda torch, *a, **k: torch.addmv(*a, **k)),
    OpInfo("addr", addr, lambda rng: [
        Sample((_v(rng, (3, 2)), _v(rng, (3,)), _v(rng, (2,))), note="outer")],
        torch=lambda torch, *a, **k: torch.addr(*a, **k)),
    OpInfo("inner", inner, lambda rng: [
        Sample((_v(rng, (2, 3)), _v(rng, (4, 3))), note="matrices"),
        Sample((_v(rng, (3,)), _v(rng, (3,))), note="vectors")],
        torch=lambda torch, *a: torch.inner(*a)),
    OpInfo("dist", dist, lambda rng: [
        Sample((_v(rng, (2, 3)), _v(rng, (2, 3))), note="p 2"),
        Sample((_v(rng, (3,)), _v(rng, (3,)), 1), note="p 1")],
        torch=lambda torch, *a: torch.dist(*a)),
    OpInfo("trace", trace, lambda rng: [Sample((_v(rng, (3, 4)),), note="rectangular")],
           torch=lambda torch, a: torch.trace(a)),
    OpInfo("diag_embed", diag_embed, lambda rng: [
        Sample((_v(rng, (2, 3)),), note="batched"), Sample((_v(rng, (3,)), 1), note="offset 1"),
        Sample((_v(rng, (3,)), -2), note="offset -2")],
        torch=lambda torch, *a: torch.diag_embed(*a)),
    OpInfo("matrix_power", matrix_power, lambda rng: [
        Sample((_v(rng, (3, 3)), 3), note="cube"),
        Sample((_v(rng, (3, 3)) + 3 * np.eye(3), -2), note="inverse squared")],
        torch=lambda torch, *a: torch.linalg.matrix_power(*a)),
]
