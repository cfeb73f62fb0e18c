"""Matrix products."""
from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from . import samples
from ._operands import operands
from .registry import OpInfo, Sample

__all__ = ["matmul", "mm"]


class MatMul(Function):
    """a @ b with NumPy/PyTorch semantics: 1-D operands and broadcast batch dims."""

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        ctx.ndims = (a.ndim, b.ndim)
        x, y = operands(a, b, "matmul")
        return x @ y

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
    (5, 2, 4)
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
    return MatMul.apply(input, other)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected two 2-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}")
    return matmul(input, mat2)


def _rmatmul(self, other):
    return matmul(other, self)


METHODS = {"matmul": matmul, "mm": mm, "__matmul__": matmul, "__rmatmul__": _rmatmul}


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


OPS = [
    OpInfo("matmul", matmul, _matmul_samples, torch=lambda torch, a, b: torch.matmul(a, b)),
]
