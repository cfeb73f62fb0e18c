"""`Variable`, PyTorch's old name for a tensor that takes part in autograd: kept so old
programs run. `Variable(t)` is `t` itself (`requires_grad=True` sets it), and every tensor
is an instance of it."""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Variable"]


class _VariableType(type):
    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor)


class Variable(metaclass=_VariableType):
    """`Variable(tensor, requires_grad=False)`: the tensor itself, as in PyTorch since 0.4.

    >>> import genesis
    >>> x = genesis.zeros(2)
    >>> Variable(x) is x, isinstance(x, Variable), Variable(x, requires_grad=True).requires_grad
    (True, True, True)
    """

    def __new__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
        if requires_grad:
            data.requires_grad_(True)
        return data
