"""The node PyTorch gives the floating outputs of ops that have no derivative (`unique`):
the output is marked as requiring grad, as in PyTorch, and differentiating through it raises
NotImplementedError naming the op, instead of silently giving no gradient.

>>> import genesis
>>> values = genesis.unique(genesis.tensor([2., 1., 2.], requires_grad=True))
>>> values.requires_grad
True
>>> values.sum().backward()
Traceback (most recent call last):
...
NotImplementedError: the derivative for 'unique' is not implemented.
(raised by the backward of NoDerivativeBackward)
"""
from __future__ import annotations

from ..autograd.function import Op
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor, wrap_array


class NoDerivative(Op):
    """`values` as an output of `input` whose gradient is not implemented."""

    @staticmethod
    def forward(ctx, input, values, op):
        ctx.op = op
        return values

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(f"the derivative for '{ctx.op}' is not implemented.")


def without_derivative(input: Tensor, values, op: str) -> Tensor:
    """`values` (an array on input's device) as a tensor; in a graph when `input` requires
    grad and the values are floating, with a backward that raises."""
    if input.requires_grad and values.dtype in FLOATING_NUMPY_DTYPES:
        return NoDerivative.apply(input, values, op)
    return wrap_array(values, input._device)
