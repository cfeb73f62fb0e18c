"""Automatic differentiation: Function, the backward engine, grad modes.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> y = x * 2 + 3
>>> y.grad_fn, y.grad_fn.next_functions
(<AddBackward>, ((<MulBackward>, 0), (None, 0)))
"""
from .engine import backward, grad
from .function import AccumulateGrad, Function, Node
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["Function", "Node", "AccumulateGrad", "backward", "grad", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled"]
