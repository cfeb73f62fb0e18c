"""What PyTorch's `torch.autograd.function` offers around `Function`: the
`once_differentiable` decorator for backwards that cannot be differentiated again,
`InplaceFunction` (a Function with an `inplace` flag) and `FunctionCtx` (the type of `ctx`).

>>> import genesis
>>> class Square(genesis.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     @once_differentiable
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 2 * x * grad
>>> x = genesis.tensor([3.0], requires_grad=True)
>>> Square.apply(x).backward(); x.grad
tensor([6.])
"""
from __future__ import annotations

import functools

from ..tensor import Tensor
from .function import DelayedError, Function, Node
from .grad_mode import grad_state

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]

FunctionCtx = Node  # what a Function's forward and backward receive as `ctx`
BackwardCFunction = Node  # PyTorch's base of a custom Function's node: genesis's is Node


def once_differentiable(backward):
    """Decorate a Function's `backward` that computes outside autograd (NumPy, in-place
    tricks): it runs with grad disabled, and when a caller asks for a graph of the gradient
    (`create_graph=True`), the gradients it returns come out of one `Error` node (PyTorch's
    `DelayedError`) whose backward refuses, with a clear error, to differentiate them again,
    instead of their silently having no second derivative."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        previous, grad_state.enabled = grad_state.enabled, False
        try:
            result = backward(ctx, *grad_outputs)
        finally:
            grad_state.enabled = previous
        if not grad_state.enabled or not any(isinstance(g, Tensor) and g._requires_grad
                                             for g in grad_outputs):
            return result
        results = result if isinstance(result, tuple) else (result,)
        message = ("trying to differentiate twice a function that was marked with "
                   f"@once_differentiable: the backward of {type(ctx).__name__} runs without "
                   "recording a graph; write it with differentiable ops and drop the decorator "
                   "to get second derivatives")
        guarded = DelayedError.apply(*(_stand_in(gradient) for gradient in results),
                                     message=message)
        if not isinstance(result, tuple):
            return guarded
        return guarded if len(results) != 1 else (guarded,)

    return wrapper


def _stand_in(gradient):
    """The gradient cut from the graph it was computed in (none was recorded), as a leaf that
    requires grad, so that the `Error` node joins the graph through it, as in PyTorch."""
    if not isinstance(gradient, Tensor):
        return gradient
    leaf = gradient.detach()
    leaf.requires_grad_(True)
    return leaf


class InplaceFunction(Function):
    """A Function that may change its input in place, said by `inplace` (PyTorch's legacy
    base class; `forward` reads `ctx`'s own flag through the class as it likes)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace
