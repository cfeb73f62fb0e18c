"""Matrix products."""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import LOWER, PROMOTE_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor
from . import samples
from ._operands import operands, rounded_product
from .registry import OpInfo, Sample

__all__ = ["matmul", "mm", "bmm", "dot", "outer", "ger"]


class MatMul(Op):
    """a @ b with NumPy/PyTorch semantics: 1-D operands and broadcast batch dims."""

    op_name = "matmul"  # in messages (not "mat_mul")
    autocast_policy = LOWER

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        ctx.ndims = (a.ndim, b.ndim)
        if a._data.dtype != b._data.dtype:  # (after autocast's casts: PyTorch does not promote)
            raise RuntimeError(f"matmul: expected both operands to have the same dtype, got "
                               f"{a.dtype.name} and {b.dtype.name}; cast one to the other's, "
                               f"e.g. with .float() or .double()")
        x, y = operands(a, b, "matmul")
        return rounded_product(x @ y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_ndim, b_ndim = ctx.ndims
        needs = ctx.needs_input_grad
        if a_ndim == 1 and b_ndim == 1:
            return (grad * b if needs[0] else None), (grad * a if needs[1] else None)
        # Treat 1-D operands as matrices (a row, b a column), as the forward did.
        if a_ndim == 1:
            grad = grad.unsqueeze(-2)
        if b_ndim == 1:
            grad = grad.unsqueeze(-1)
        grad_a = grad_b = None
        if needs[0]:
            b2 = b.unsqueeze(-1) if b_ndim == 1 else b
            grad_a = grad @ b2.mT
            if a_ndim == 1:
                grad_a = grad_a.squeeze(-2)
        if needs[1]:
            a2 = a.unsqueeze(0) if a_ndim == 1 else a
            grad_b = a2.mT @ grad
            if b_ndim == 1:
                grad_b = grad_b.squeeze(-1)
        return grad_a, grad_b


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with broadcasting over batch dims (`input @ other`).

    >>> import genesis
    >>> (genesis.ones(5, 2, 3) @ genesis.ones(3, 4)).shape
    genesis.Size([5, 2, 4])
    """
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"matmul: both operands must be Tensors, got {type(input).__name__} "
                        f"and {type(other).__name__}")
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"matmul: both operands need at least one dimension, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}; use * for scalars")
    inner_a = input.shape[-1]
    inner_b = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if inner_a != inner_b:
        raise RuntimeError(f"matmul: shapes {tuple(input.shape)} and {tuple(other.shape)} can't be "
                           f"multiplied: the inner dimensions {inner_a} and {inner_b} differ")
    if grad_state.enabled and (input.ndim > 2 or other.ndim > 2):
        input, other = _copied_where_pytorch_copies(input, other)
    return MatMul.apply(input, other)


def _copied_where_pytorch_copies(a: Tensor, b: Tensor) -> tuple:
    """(a, b), an operand replaced by a copy of it (a Clone node) where PyTorch's matmul keeps a
    copy for the backward rather than the operand: b when a 1-D or 2-D `a` that requires grad
    meets a batched b (PyTorch folds b^T into a matrix), otherwise, in a batched product, an
    operand broadcast over batch dims (PyTorch expands and reshapes it). An in-place write to
    the operand after the forward then leaves the backward free to run, as in PyTorch. Only an
    operand that the backward keeps (the other requires grad) is copied."""
    if a.ndim <= 2 < b.ndim and a.requires_grad:
        return a, b.clone()
    if b.ndim <= 2 < a.ndim or a.shape[:-2] == b.shape[:-2]:  # PyTorch folds a's batch dims
        return a, b                                   # into its rows, or nothing is broadcast
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if math.prod(batch) <= 1:
        return a, b

    def broadcast(operand: Tensor) -> bool:
        own = operand.shape[:-2] if operand.ndim > 1 else ()
        return (1,) * (len(batch) - len(own)) + tuple(own) != tuple(batch)

    return (a.clone() if b.requires_grad and broadcast(a) else a,
            b.clone() if a.requires_grad and broadcast(b) else b)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected two 2-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}")
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting).

    >>> import genesis
    >>> genesis.bmm(genesis.ones(5, 2, 3), genesis.ones(5, 3, 4)).shape
    genesis.Size([5, 2, 4])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected two 3-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}; use matmul to broadcast batch dims")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: the batch sizes differ: shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}")
    return matmul(input, mat2)


def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d tensor).

    >>> import genesis
    >>> genesis.dot(genesis.tensor([1., 2.]), genesis.tensor([3., 4.]))
    tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"dot: expected two 1-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(other.shape)}")
    if input.shape != other.shape:
        raise RuntimeError(f"dot: the tensors must have the same length, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}")
    input, other = autocast_inputs(PROMOTE_ON_CUDA, input, other)
    with outside_autocast():
        return matmul(input, other)


class Outer(Op):
    """Outer product of two 1-D tensors: out[i, j] = a[i] * b[j]."""

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        x, y = operands(a, b, "outer")
        return a._device.xp.outer(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad @ b if needs[0] else None), (a @ grad if needs[1] else None)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: a (len(input), len(vec2)) matrix.

    >>> import genesis
    >>> genesis.outer(genesis.tensor([1., 2.]), genesis.tensor([1., 10., 100.]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]])
    """
    if not isinstance(input, Tensor) or not isinstance(vec2, Tensor):
        raise TypeError(f"outer: both operands must be Tensors, got {type(input).__name__} and "
                        f"{type(vec2).__name__}")
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected two 1-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(vec2.shape)}")
    return Outer.apply(input, vec2)


ger = outer


def _rmatmul(self, other):
    return matmul(other, self)


METHODS = {"matmul": matmul, "mm": mm, "bmm": bmm, "dot": dot, "outer": outer, "ger": outer,
           "__matmul__": matmul, "__rmatmul__": _rmatmul}


def _matmul_samples(rng):
    def sample(shape_a, shape_b, **kwargs):
        return Sample((samples.values(rng, shape_a), samples.values(rng, shape_b)),
                      note=f"{shape_a} @ {shape_b}", **kwargs)

    return [
        sample((3, 4), (4, 2)), sample((4,), (4, 2)), sample((3, 4), (4,)), sample((4,), (4,)),
        sample((2, 3, 4), (2, 4, 5)), sample((2, 3, 4), (4, 5)), sample((4,), (2, 4, 3)),
        sample((2, 1, 3, 4), (5, 4, 2)), sample((3, 4), (4, 2), grad=(False, True)),
        sample((3, 4), (4, 2), grad=(True, False)), sample((4, 3), (3, 4), layout="transposed"),
    ]


def _pair(rng, shape_a, shape_b, **kwargs):
    return Sample((samples.values(rng, shape_a), samples.values(rng, shape_b)),
                  note=f"{shape_a}, {shape_b} {kwargs}", **kwargs)


OPS = [
    OpInfo("matmul", matmul, _matmul_samples, torch=lambda torch, a, b: torch.matmul(a, b)),
    OpInfo("mm", mm, lambda rng: [_pair(rng, (3, 4), (4, 2)),
                                  _pair(rng, (4, 3), (3, 2), layout="transposed")],
           torch=lambda torch, a, b: torch.mm(a, b)),
    OpInfo("bmm", bmm, lambda rng: [_pair(rng, (2, 3, 4), (2, 4, 5)),
                                    _pair(rng, (2, 3, 4), (2, 4, 3), layout="transposed"),
                                    _pair(rng, (2, 3, 4), (2, 4, 2), grad=(False, True)),
                                    _pair(rng, (0, 3, 4), (0, 4, 2))],
           torch=lambda torch, a, b: torch.bmm(a, b)),
    OpInfo("dot", dot, lambda rng: [_pair(rng, (4,), (4,)), _pair(rng, (3,), (3,), layout="strided"),
                                    _pair(rng, (4,), (4,), grad=(True, False)), _pair(rng, (0,), (0,))],
           torch=lambda torch, a, b: torch.dot(a, b)),
    OpInfo("outer", outer, lambda rng: [_pair(rng, (3,), (4,)),
                                        _pair(rng, (2,), (5,), layout="strided"),
                                        _pair(rng, (3,), (2,), grad=(False, True)),
                                        _pair(rng, (0,), (2,))],
           torch=lambda torch, a, b: torch.outer(a, b)),
]
