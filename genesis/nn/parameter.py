"""`Parameter`: a Tensor that a `Module` registers as one of its learnable weights.

>>> import genesis
>>> w = genesis.nn.Parameter(genesis.zeros(2))
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""
from __future__ import annotations

from typing import Protocol

from ..creation import empty
from ..listeners import Listeners
from ..tensor import Tensor, wrap_array

__all__ = ["Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer", "is_lazy",
           "made_listeners", "ParameterMadeListener"]


class ParameterMadeListener(Protocol):
    """Told of each Parameter as it is made (genesis trace: where a model's layers were
    built, to tell a layer made after its optimizer)."""

    def __call__(self, parameter: "Parameter") -> None:
        ...


made_listeners: Listeners[ParameterMadeListener] = Listeners()


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
        for listener in made_listeners:
            listener(self)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        """A new Parameter with a copy of the values, without `.grad`, as PyTorch's (a plain
        tensor's deepcopy keeps its .grad; a parameter's, so a copied model, does not)."""
        copied = Parameter(wrap_array(self._data.copy(), self._device), self._requires_grad)
        memo[id(self)] = copied
        return copied

    def __reduce__(self):
        return (Parameter, (Tensor(self.detach()), self._requires_grad))



class UninitializedParameter(Parameter):
    """The placeholder a lazy module (`nn.LazyLinear`, ...) holds for a weight whose shape is
    known only at its first forward: an empty Parameter until `materialize(shape)` gives it
    storage in place, so optimizers, hooks and `genesis trace` holding it see the real weight.
    (PyTorch then turns its class into Parameter; genesis keeps the class, and `is_lazy`
    says whether it is still waiting.)

    >>> import genesis
    >>> weight = genesis.nn.UninitializedParameter(dtype=genesis.float64)
    >>> genesis.nn.parameter.is_lazy(weight)
    True
    >>> weight.materialize((2, 3))
    >>> weight.shape, weight.dtype, genesis.nn.parameter.is_lazy(weight)
    (genesis.Size([2, 3]), genesis.float64, False)
    """

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        super().__init__(empty(0, device=device, dtype=dtype), requires_grad)
        self.waiting = True

    def materialize(self, shape: tuple, device=None, dtype=None) -> None:
        """Give this placeholder storage of `shape` (values not set), on its own device and
        dtype unless others are named."""
        _give_storage(self, shape, device, dtype)

    def __repr__(self) -> str:
        return "<UninitializedParameter>" if self.waiting else super().__repr__()


def _give_storage(placeholder: Tensor, shape: tuple, device, dtype) -> None:
    """Materialise a placeholder in place (the same object, new storage)."""
    data = empty(*shape, device=device or placeholder._device, dtype=dtype or placeholder.dtype)
    placeholder._data, placeholder._device = data._data, data._device
    placeholder._version_counter[0] += 1
    placeholder.waiting = False


def is_lazy(tensor: Tensor) -> bool:
    """Whether `tensor` is a lazy module's placeholder still waiting for its shape.

    >>> import genesis
    >>> is_lazy(genesis.nn.UninitializedBuffer()), is_lazy(genesis.zeros(1))
    (True, False)
    """
    return isinstance(tensor, UninitializedParameter | UninitializedBuffer) and tensor.waiting


class Buffer(Tensor):
    """A tensor that becomes a buffer of a Module when set as one of its attributes
    (`self.mask = nn.Buffer(t)`, like `register_buffer("mask", t)`); `persistent=False`
    leaves it out of `state_dict()`. It shares storage with `data`.

    >>> import genesis
    >>> model = genesis.nn.Module()
    >>> model.steps = genesis.nn.Buffer(genesis.zeros(1), persistent=False)
    >>> [name for name, _ in model.named_buffers()], list(model.state_dict())
    (['steps'], [])
    """

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Buffer expects a genesis Tensor, got {type(data).__name__}; "
                            "wrap it first: Buffer(genesis.tensor(data))")
        self._set_storage(data._data, data._device, data._version_counter, data.requires_grad)
        self.persistent = persistent


class UninitializedBuffer(Buffer):
    """The placeholder a lazy module holds for a buffer (running statistics) whose shape is
    known only at its first forward; `materialize(shape)` gives it storage in place.

    >>> import genesis
    >>> buffer = genesis.nn.UninitializedBuffer()
    >>> buffer.materialize((3,))
    >>> buffer.shape
    genesis.Size([3])
    """

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True):
        super().__init__(empty(0, device=device, dtype=dtype, requires_grad=requires_grad),
                         persistent=persistent)
        self.waiting = True

    def materialize(self, shape: tuple, device=None, dtype=None) -> None:
        """Give this placeholder storage of `shape` (values not set), on its own device and
        dtype unless others are named."""
        _give_storage(self, shape, device, dtype)

    def __repr__(self) -> str:
        return "<UninitializedBuffer>" if self.waiting else super().__repr__()
