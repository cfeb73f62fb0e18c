"""`Parameter`: a Tensor that a `Module` registers as one of its learnable weights.

>>> import genesis
>>> w = genesis.nn.Parameter(genesis.zeros(2))
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""
from __future__ import annotations

from ..creation import empty
from ..tensor import Tensor, wrap_array

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and is registered when set on a Module.

    It shares storage (and the version counter) with `data`; ops on it give
    plain Tensors.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a genesis Tensor, got {type(data).__name__}; "
                            "wrap it first: Parameter(genesis.tensor(data))")
        self._set_storage(data._data, data._device, data._version_counter, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        copied = Parameter(wrap_array(self._data.copy(), self._device), self._requires_grad)
        if self._grad is not None:
            copied._grad = wrap_array(self._grad._data.copy(), self._device)
        memo[id(self)] = copied
        return copied

    def __reduce__(self):
        return (Parameter, (Tensor(self.detach()), self._requires_grad))

