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
from .function import Function, Node
from .grad_mode import grad_state

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]

FunctionCtx = Node  # what a Function's forward and backward receive as `ctx`
BackwardCFunction = Node  # PyTorch's base of a custom Function's node: genesis's is Node


class _DifferentiatedTwice(Function):
    """Stands for a once-differentiable backward's result in a graph built by
    `create_graph=True`: differentiating through it raises, as in PyTorch."""

    @staticmethod
    def forward(ctx, gradient, *grad_outputs):
        return gradient.clone()

    @staticmethod
    def backward(ctx, *unused):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable: the backward of "
                           f"{ctx.__dict__.get('backward_name', 'a Function')} runs without "
                           "recording a graph; write it with differentiable ops and drop the "
                           "decorator to get second derivatives")


def once_differentiable(backward):
    """Decorate a Function's `backward` that computes outside autograd (NumPy, in-place
    tricks): it runs with grad disabled, and when a caller asks for a graph of the gradient
    (`create_graph=True`), the gradients it returns refuse to be differentiated again, with
    a clear error, instead of silently having no second derivative."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        previous, grad_state.enabled = grad_state.enabled, False
        try:
            result = backward(ctx, *grad_outputs)
        finally:
            grad_state.enabled = previous
        recorded = [g for g in grad_outputs if isinstance(g, Tensor) and g._requires_grad]
        if not grad_state.enabled or not recorded:
            return result
        name = type(ctx).__name__
        results = result if isinstance(result, tuple) else (result,)
        guarded = tuple(_guarded(gradient, recorded, name) for gradient in results)
        return guarded if isinstance(result, tuple) else guarded[0]

    return wrapper


def _guarded(gradient, recorded: list, name: str):
    if not isinstance(gradient, Tensor):
        return gradient
    output = _DifferentiatedTwice.apply(gradient, *recorded)
    output.grad_fn.backward_name = name
    return output


class InplaceFunction(Function):
    """A Function that may change its input in place, said by `inplace` (PyTorch's legacy
    base class; `forward` reads `ctx`'s own flag through the class as it likes)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace
