"""Containers: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`, `ParameterDict`.

>>> from genesis import nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
>>> len(model), model[-1]
(3, Linear(in_features=8, out_features=1, bias=True))
>>> model[:2]
Sequential(
  (0): Linear(in_features=4, out_features=8, bias=True)
  (1): Tanh()
)
"""
from __future__ import annotations

import operator

from ..tensor import Tensor
from .module import Module, _indent
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _checked_index(index, length: int, what: str) -> int:
    index = operator.index(index)
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range for a {what} of length {length}")
    return index % length


class _IndexedModules(Module):
    """Shared by Sequential and ModuleList: children named "0", "1", ... in order."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)._from_items(list(self._modules.items())[index])
        return list(self._modules.values())[_checked_index(index, len(self), type(self).__name__)]

    def __setitem__(self, index, module: Module) -> None:
        position = _checked_index(index, len(self), type(self).__name__)
        self.add_module(list(self._modules)[position], module)

    def __delitem__(self, index) -> None:
        keys = list(self._modules)
        targets = keys[index] if isinstance(index, slice) else \
            [keys[_checked_index(index, len(self), type(self).__name__)]]
        for key in targets:
            del self._modules[key]
        self._renumber()

    def _renumber(self, modules: list | None = None) -> None:
        modules = list(self._modules.values()) if modules is None else modules
        self._modules.clear()
        for position, module in enumerate(modules):
            self._modules[str(position)] = module

    def append(self, module: Module):
        """Add `module` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before position `index`."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)

    def pop(self, index: int = -1) -> Module:
        module = self[index]
        del self[index]
        return module


class Sequential(_IndexedModules):
    """Modules called one after another: `Sequential(a, b, c)(x) == c(b(a(x)))`.

    Also accepts one dict of named modules: `Sequential({"fc": ..., "act": ...})`.
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    @classmethod
    def _from_items(cls, items: list) -> "Sequential":
        return cls(dict(items))

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules whose parameters are registered (it has no forward of its own).

    >>> from genesis import nn
    >>> layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))
    >>> layers
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def _from_items(cls, items: list) -> "ModuleList":
        return cls(module for _, module in items)

    def __iadd__(self, modules) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other) -> "ModuleList":
        return ModuleList(list(self) + list(other))

    def _repr_lines(self) -> str:  # Module.__repr__ calls it (and guards against cycles)
        reprs = [repr(module) for module in self]
        if not reprs:
            return f"{self._get_name()}()"
        blocks = []  # [first index, last index, repr] of runs of equal reprs
        for index, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = index
            else:
                blocks.append([index, index, text])
        lines = [_indent(f"({first}): {text}" if first == last else
                         f"({first}-{last}): {last - first + 1} x {text}", 2)
                 for first, last, text in blocks]
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules whose parameters are registered (insertion ordered)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        """Add modules from a dict (or ModuleDict) or an iterable of (name, module) pairs."""
        pairs = modules.items() if isinstance(modules, dict | ModuleDict) else modules
        for key, module in pairs:
            self[key] = module


def _as_parameter(value):
    if value is None or isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"expected a Parameter or Tensor, got {type(value).__name__}")


def _describe_parameters(parameters: dict) -> str:
    return "\n".join(f"({name}): Parameter containing: [{param.dtype.name} of size "
                     f"{'x'.join(map(str, param.shape))}]"
                     for name, param in parameters.items() if param is not None)


class ParameterList(Module):
    """A list of parameters, registered as "0", "1", ... (tensors are wrapped as Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        for value in values or ():
            self.append(value)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList(list(self._parameters.values())[index])
        position = _checked_index(index, len(self), "ParameterList")
        return self._parameters[str(position)]

    def __setitem__(self, index: int, value) -> None:
        position = _checked_index(index, len(self), "ParameterList")
        self.register_parameter(str(position), _as_parameter(value))

    def append(self, value) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> "ParameterList":
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return _describe_parameters(self._parameters)


class ParameterDict(Module):
    """A dict of parameters (tensors are wrapped as Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.update(values)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, values) -> None:
        pairs = values.items() if isinstance(values, dict | ParameterDict) else values
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return _describe_parameters(self._parameters)
