"""`Variable`, PyTorch's old name for a tensor that takes part in autograd: kept so old
programs run. `Variable(t)` is `t` detached (sharing its data; `requires_grad=True` makes
it a new leaf), and every tensor is an instance of it."""
from __future__ import annotations

from ..tensor import Tensor
from .graph_task import execution_engine

__all__ = ["Variable"]


class _VariableType(type):
    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor)


class Variable(metaclass=_VariableType):
    """`Variable(tensor, requires_grad=False)`: the tensor detached, as in PyTorch (a new
    tensor over the same data). `Variable._execution_engine.queue_callback(fn)` runs `fn`
    once the running backward pass ends.

    >>> import genesis
    >>> x = genesis.zeros(2)
    >>> v = Variable(x, requires_grad=True)
    >>> v is x, isinstance(x, Variable), v.requires_grad, x.requires_grad
    (False, True, True, False)
    """

    _execution_engine = execution_engine

    def __new__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
        variable = data.detach()
        if requires_grad:
            variable.requires_grad_(True)
        return variable
