"""Parametrizations: a module's parameter computed from other tensors, as
`torch.nn.utils.parametrize`.

`register_parametrization(module, "weight", P)` moves the parameter to
`module.parametrizations.weight.original` (or `original0`, `original1`, ... when `P` has a
`right_inverse` that splits it) and makes `module.weight` a property that returns
`P(original)` on every read: what the optimizer trains is the original, what the module
uses is its image. Assigning `module.weight = X` stores `P.right_inverse(X)`. To give the
module a property, its class becomes a subclass, `Parametrized<Class>`, until the last
parametrization is removed.

>>> import genesis
>>> from genesis import nn
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> layer = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
>>> type(layer).__name__, bool((layer.weight == layer.weight.T).all())
('ParametrizedLinear', True)
>>> [name for name, _ in layer.named_parameters()]
['bias', 'parametrizations.weight.original']
>>> type(remove_parametrizations(layer, "weight")).__name__
'Linear'
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from copy import deepcopy

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "transfer_parametrizations_and_params",
           "ParametrizationList"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside this context each parametrized tensor is computed once, at its first read, and
    that value is reused (a weight read at every step of an RNN, say).

    >>> import genesis
    >>> layer = register_parametrization(genesis.nn.Linear(2, 2), "weight", genesis.nn.Identity())
    >>> with cached():
    ...     layer.weight is layer.weight
    True
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(target: Tensor, source: Tensor) -> None:
    """Make `target` hold `source`'s values (and shape), keeping the tensor object: an
    optimizer that holds it goes on training it."""
    target.data = source.detach().clone()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the tensor(s) they start from (`original`,
    or `original0`, `original1`, ...). Made by `register_parametrization`."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor | Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != original.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new.device != original.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"device.\noriginal.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            if new is not original:
                with no_grad():
                    _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for index, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                     f"(list, tuple...). Got element {index} of the sequence with "
                                     f"type {type(part).__name__}.")
                part = part.detach().clone()
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{index}", part)
        if not self.unsafe:
            _check_image(self(), shape, dtype, "unparametrized", "parametrized", "")

    def right_inverse(self, value: Tensor) -> None:
        """Store what the parametrizations' `right_inverse`s (last registered first) make of
        `value` in the original tensor(s): what assigning `module.<name> = value` does."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_values(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. "
                                 f"Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for index, part in enumerate(value):
                original = getattr(self, f"original{index}")
                if not isinstance(part, Tensor):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                     f"element {index} of type {type(part).__name__}.")
                if part.dtype != original.dtype:
                    raise ValueError(f"Tensor {index} returned by `right_inverse` has dtype "
                                     f"{part.dtype} while `original{index}` has dtype "
                                     f"{original.dtype}")
                _set_values(original, part)

    def forward(self) -> Tensor:
        if self.is_tensor:
            value = self[0](self.original)
        else:
            value = self[0](*(getattr(self, f"original{index}") for index in range(self.ntensors)))
        for module in list(self)[1:]:
            value = module(value)
        return value


def _check_image(image, shape, dtype, before: str, after: str, where: str) -> None:
    """A parametrization's output must be a tensor of the shape and dtype it replaces."""
    if not isinstance(image, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(image).__name__}.")
    for what, mine, expected in (("dtype", image.dtype, dtype), ("shape", image.shape, shape)):
        if mine != expected:
            raise ValueError(f"Registering a parametrization may not change the {what} of the "
                             f"tensor, unless `unsafe` flag is enabled.\n{before}{where} {what}: "
                             f"{expected}\n{after} {what}: {mine}")


def _inject_new_class(module: Module) -> None:
    """Give `module` a class of its own, a subclass of its class, to hold the properties."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        replica = memo.get(id(self))
        if replica is not None:
            return replica
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        return replica

    namespace = {} if hasattr(cls, "__deepcopy__") else {"__deepcopy__": default_deepcopy}
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make `module.<tensor_name>` (a parameter or buffer, or an already parametrized name,
    whose parametrizations then chain) read as `parametrization(original)`; see the module
    docstring. Unless `unsafe`, the parametrization must keep the tensor's shape and dtype.
    Returns `module`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            image = parametrization(current)
            _check_image(image, current.shape, current.dtype, f"module.{tensor_name}",
                         f"parametrization(module.{tensor_name})", "")
            if hasattr(parametrization, "right_inverse"):
                try:
                    back = parametrization.right_inverse(image)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(back, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(back).__name__}")
                    _check_image(back, current.shape, current.dtype, f"module.{tensor_name}",
                                 "returned", "")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, when given)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo `register_parametrization` on `tensor_name`: the name becomes a parameter (or
    buffer) again, holding the current parametrized value (`leave_parametrized`) or the
    original tensor. The module gets its own class back with its last parametrization."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set_values(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach(), value.requires_grad) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that "
                         "is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization (its class, when it has none)."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give `to_module` the parametrizations of `from_module` (all, or `tensor_name`'s),
    with the same original values. Returns `to_module`."""
    if not is_parametrized(from_module):
        raise ValueError(f"Module {from_module} is not parametrized")
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        with no_grad():
            if source.is_tensor:
                _set_values(target.original, source.original)
            else:
                for index in range(source.ntensors):
                    _set_values(getattr(target, f"original{index}"),
                                getattr(source, f"original{index}"))
    return to_module
