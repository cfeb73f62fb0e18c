"""Names for the leaves and outputs of a graph: parameter paths and variable names.

A parameter is named by its `named_parameters()` path (`fc1.weight`); any
other tensor by the variable that holds it in the namespace given (usually the
caller's locals), else by position (`input0`, `output0`).

>>> import genesis
>>> x = genesis.tensor([1.0], requires_grad=True)
>>> names = Names.from_namespace({"x": x, "_hidden": x})
>>> names.leaf_name(x)
('x', 'input')
"""
from __future__ import annotations

import os
import sys

from ..tensor import Tensor

__all__ = ["Names", "parameter_names", "is_module", "user_namespace"]

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_module(value) -> bool:
    """A module in the PyTorch sense: an instance with `named_parameters()` and `named_modules()`."""
    return not isinstance(value, type) and callable(getattr(value, "named_parameters", None)) \
        and callable(getattr(value, "named_modules", None))


def parameter_names(module) -> dict:
    """{id(tensor): (dotted name, tensor)} for the parameters of `module`."""
    return {id(tensor): (name, tensor) for name, tensor in module.named_parameters()
            if isinstance(tensor, Tensor)}


def user_namespace() -> dict:
    """Local variables of the innermost frame outside genesis (where the user called in)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_GENESIS_DIR):
        frame = frame.f_back
    return frame.f_locals if frame is not None else {}


class Names:
    """Looks tensors up by identity: explicit parameters first, then module parameters,
    then variables; everything else gets a positional name."""

    def __init__(self, params: dict, variables: dict):
        self._params = params        # id -> (name, tensor)
        self._variables = variables  # id -> (name, tensor)
        self._counts = {"input": 0, "output": 0}

    @classmethod
    def from_namespace(cls, namespace: dict, params: dict | None = None,
                       known_params: dict | None = None) -> "Names":
        """`params` (name -> tensor) overrides module paths found in `namespace` or given
        as `known_params` ({id: (name, tensor)}, e.g. from modules seen while recording)."""
        found = dict(known_params or {})
        variables = {}
        for name, value in namespace.items():
            if name.startswith("_"):
                continue
            if isinstance(value, Tensor):
                variables.setdefault(id(value), (name, value))
            elif is_module(value):
                for key, entry in parameter_names(value).items():
                    found.setdefault(key, entry)
        for name, tensor in (params or {}).items():
            if not isinstance(tensor, Tensor):
                raise TypeError(f"params[{name!r}] is a {type(tensor).__name__}; params must map "
                                "names to genesis Tensors")
            found[id(tensor)] = (name, tensor)
        return cls(found, variables)

    def add_module_parameters(self, module) -> None:
        """Name the parameters of `module` by their paths in it, where nothing named them yet."""
        for key, entry in parameter_names(module).items():
            self._params.setdefault(key, entry)

    def leaf_name(self, tensor) -> tuple:
        """(name, kind) of a leaf: kind is "param" for a named parameter, else "input"."""
        if tensor is not None:
            entry = self._params.get(id(tensor))
            if entry is not None and entry[1] is tensor:
                return entry[0], "param"
            name = self.variable_name(tensor)
            if name is not None:
                return name, "input"
        return self.positional("input"), "input"

    def variable_name(self, tensor) -> str | None:
        entry = self._variables.get(id(tensor))
        return entry[0] if entry is not None and entry[1] is tensor else None

    def positional(self, kind: str) -> str:
        index = self._counts[kind]
        self._counts[kind] = index + 1
        return f"{kind}{index}"
