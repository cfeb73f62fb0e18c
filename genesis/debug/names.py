"""Names for the leaves and outputs of a graph: parameter paths and variable names.

A parameter is named by its `named_parameters()` path (`fc1.weight`); any
other tensor by the variable that holds it in the namespace given (usually the
caller's locals), else by position (`input0`, `output0`).

The outermost modules a script calls or holds (`RootModules`) are named so that
paths are unambiguous when it runs several models and honest when it calls a loss
module beside its model:

- exactly one of them has parameters (the model): its paths stay relative to it
  ("fc1", "fc1.weight"), as `named_parameters()` gives them;
- several have parameters: each is named by the variable holding it
  ("generator.0.weight", "discriminator.0.weight"), else by its class name
  ("Sequential", "Sequential#2");
- one without parameters (a loss module, an activation called on its own) is not the
  model: it is named by its variable ("loss_fn") or its class ("CrossEntropyLoss"), so
  its ops are not drawn inside the model; unless it is the only module there is.

>>> import genesis
>>> x = genesis.tensor([1.0], requires_grad=True)
>>> names = Names.from_namespace({"x": x, "_hidden": x})
>>> names.leaf_name(x)
('x', 'input')
>>> import genesis.nn as nn
>>> generator, discriminator = nn.Linear(2, 2), nn.Linear(2, 1)
>>> loss_fn = nn.MSELoss()
>>> roots = RootModules()
>>> for module in (generator, discriminator, loss_fn):
...     roots.note(module, [{"generator": generator, "discriminator": discriminator,
...                          "loss_fn": loss_fn}])
>>> roots.prefix(generator), roots.prefix(loss_fn)
('generator', 'loss_fn')
>>> sorted(name for name, _ in roots.parameter_names().values())
['discriminator.bias', 'discriminator.weight', 'generator.bias', 'generator.weight']
"""
from __future__ import annotations

import os
import sys
import threading

from ..tensor import Tensor

__all__ = ["Names", "RootModules", "parameter_names", "is_module", "user_namespace",
           "user_namespaces", "top_level_modules"]

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
    """The variables visible in the innermost frame outside genesis (where the user called
    in): its locals, over its module's globals when that frame is a function's, so a
    `loss.backward()` inside `def train_step()` still names the weights the script holds in
    global variables.

    >>> import genesis
    >>> weight = genesis.ones(2, requires_grad=True)
    >>> def step():
    ...     scale = 2.0
    ...     return sorted(name for name in user_namespace() if name in ("weight", "scale"))
    >>> step()
    ['scale', 'weight']
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_GENESIS_DIR):
        frame = frame.f_back
    if frame is None:
        return {}
    if frame.f_locals is frame.f_globals:
        return frame.f_locals
    return {**frame.f_globals, **frame.f_locals}


class Names:
    """Looks tensors up by identity: explicit parameters first, then module parameters,
    then variables; everything else gets a positional name."""

    def __init__(self, params: dict, variables: dict, roots: "RootModules | None" = None,
                 namespaces: list = ()):
        self._params = params        # id -> (name, tensor): given explicitly, they win
        self._variables = variables  # id -> (name, tensor)
        self.roots = roots if roots is not None else RootModules()
        self._namespaces = list(namespaces)  # where the variables of new roots are looked up
        self._counts = {"input": 0, "output": 0}

    @classmethod
    def from_namespace(cls, namespace: dict, params: dict | None = None,
                       roots: "RootModules | None" = None) -> "Names":
        """Names for the leaves and outputs of a graph the code owning `namespace` made.

        Module parameters are named by `roots` (the outermost modules a recorder saw
        called) or, without it, by the top-level modules among `namespace`'s values;
        `params` (name -> tensor) overrides both."""
        if roots is None:
            roots = RootModules()
            for module in top_level_modules(namespace):
                roots.note(module, [namespace])
        variables = {}
        for name, value in namespace.items():
            if not name.startswith("_") and isinstance(value, Tensor):
                variables.setdefault(id(value), (name, value))
        found = {}
        for name, tensor in (params or {}).items():
            if not isinstance(tensor, Tensor):
                raise TypeError(f"params[{name!r}] is a {type(tensor).__name__}; params must map "
                                "names to genesis Tensors")
            found[id(tensor)] = (name, tensor)
        return cls(found, variables, roots, [namespace])

    def add_root_module(self, module) -> None:
        """Count `module` (called outermost) among the roots its parameters are named by."""
        self.roots.note(module, self._namespaces)

    def parameter_name(self, tensor) -> str | None:
        """The name of `tensor` as a parameter: given in `params`, or its path in a root."""
        entry = self._params.get(id(tensor))
        if entry is None:
            entry = self.roots.parameter_names().get(id(tensor))
        return entry[0] if entry is not None and entry[1] is tensor else None

    def leaf_name(self, tensor) -> tuple:
        """(name, kind) of a leaf: kind is "param" for a named parameter, else "input"."""
        if tensor is not None:
            name = self.parameter_name(tensor)
            if name is not None:
                return name, "param"
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


class _Root:
    __slots__ = ("module", "variable", "has_parameters")

    def __init__(self, module, variable: str | None):
        self.module = module
        self.variable = variable
        self.has_parameters = next(iter(module.named_parameters()), None) is not None


class RootModules:
    """The outermost modules seen, in order, with the names the rule above gives them."""

    def __init__(self):
        self._roots = {}    # id(module) -> _Root; the module is kept alive, so its id stays
        self._parts = {}    # id(module) -> (id of the root it is inside, its path there, it)
        self._models = 0    # roots with parameters
        self._names = None  # id(module) -> prefix, worked out again after each new root
        self._parameters = None  # parameter_names(), likewise
        self._lock = threading.RLock()  # models may be called on several threads at once

    def note(self, module, namespaces=()) -> None:
        """Count `module` as an outermost module; `namespaces` (dicts of the script's
        variables) are searched for the variable that holds it, the first time it is seen.
        A module inside a root already seen, or inside a module the script holds in a
        variable (`model.encoder` called on its own), is no root of its own: its paths are
        those it has in that root, so its parameters have the same names whichever way the
        script calls them; a root seen before inside `module` becomes part of it."""
        if id(module) in self._roots or id(module) in self._parts:
            return
        with self._lock:
            if id(module) in self._roots or id(module) in self._parts:
                return
            container = _container_in(namespaces, module)
            if container is not None:  # the model the script holds, called in parts so far
                self.note(container, namespaces)
            for key, root in self._roots.items():
                path = _path_inside(root.module, module)
                if path is not None:
                    self._parts[id(module)] = (key, path, module)
                    return
            root = _Root(module, _variable_holding(module, namespaces))
            for key, inner in list(self._roots.items()):
                if _path_inside(module, inner.module) is not None:  # an earlier root is a
                    del self._roots[key]  # part of this one (and so are its parts)
                    self._models -= inner.has_parameters
                    self._parts[key] = (None, None, inner.module)
            for key, (outer, _, part) in list(self._parts.items()):
                if outer is None or outer not in self._roots:
                    self._parts[key] = (id(module), _path_inside(module, part), part)
            self._roots[id(module)] = root
            self._models += root.has_parameters
            self._names = self._parameters = None

    def regroup(self, namespaces) -> None:
        """Make each root that a module the script holds now has inside a part of that
        module, as `note` would have if the module had existed at the root's call: a
        parametrization that genesis calls while its layer is being built
        (`spectral_norm(nn.Linear(4, 2))` inside `nn.Sequential(...)`) is named by its path
        in the model the script then holds, not as a model of its own."""
        with self._lock:
            for root in list(self._roots.values()):
                if id(root.module) in self._roots:
                    container = _container_in(namespaces, root.module)
                    if container is not None:
                        self.note(container, namespaces)

    def __contains__(self, module) -> bool:
        return id(module) in self._roots or id(module) in self._parts

    def __len__(self) -> int:
        return len(self._roots)

    def prefix(self, module) -> str:
        """The path of an outermost module: "" for the only model, else its name; a part of
        a root: its path there, under the root's name."""
        with self._lock:
            if self._names is None:
                self._names = self._work_out_names()
            name = self._names.get(id(module))
            part = self._parts.get(id(module))
        if part is not None:
            outer, path, _ = part
            outer_name = self._names.get(outer, "")
            return f"{outer_name}.{path}" if outer_name else path
        if name is None:  # not noted: named as if it were noted now
            self.note(module)
            return self.prefix(module)
        return name

    def _work_out_names(self) -> dict:
        names, taken = {}, set()
        alone = len(self._roots) == 1
        for key, root in self._roots.items():
            if root.has_parameters and self._models == 1 or alone:
                names[key] = ""
                continue
            base = root.variable or type(root.module).__name__
            name, number = base, 1
            while name in taken:
                number += 1
                name = f"{base}#{number}"
            taken.add(name)
            names[key] = name
        return names

    def parameter_names(self) -> dict:
        """{id(tensor): (dotted name, tensor)} for the parameters of every root, named
        under its prefix ("fc1.weight", or "generator.0.weight" beside another model)."""
        with self._lock:
            if self._parameters is None:
                found = {}
                for root in self._roots.values():
                    prefix = self.prefix(root.module)
                    for name, tensor in root.module.named_parameters():
                        if isinstance(tensor, Tensor):
                            found.setdefault(id(tensor), (f"{prefix}.{name}" if prefix else name,
                                                          tensor))
                self._parameters = found
            return self._parameters

    def unregistered_parameter_names(self) -> dict:
        """{id(tensor): (name, tensor)} for the parameters of modules a root's modules hold in
        a plain list, tuple or dict attribute (`self.layers = [nn.Linear(...)]`), which
        `named_parameters()` leaves out: named by that path ("hidden[0].weight")."""
        registered = self.parameter_names()
        found = {}
        with self._lock:
            roots = [(self.prefix(root.module), root.module) for root in self._roots.values()]
        for prefix, module in roots:
            for path, submodule in module.named_modules(prefix=prefix):
                for attribute, value in vars(submodule).items():
                    if attribute.startswith("_") or not isinstance(value, list | tuple | dict):
                        continue
                    items = value.items() if isinstance(value, dict) else enumerate(value)
                    for key, held in items:
                        if not is_module(held):
                            continue
                        where = f"{path}.{attribute}" if path else attribute
                        where += f"[{key!r}]" if isinstance(value, dict) else f"[{key}]"
                        for name, tensor in held.named_parameters():
                            if isinstance(tensor, Tensor) and id(tensor) not in registered:
                                found.setdefault(id(tensor), (f"{where}.{name}", tensor))
        return found


def user_namespaces(depth: int = 1) -> list:
    """[locals, globals] of the innermost frame outside genesis, `depth` frames above the
    caller at least (where the user's code called in)."""
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.startswith(_GENESIS_DIR):
        frame = frame.f_back
    if frame is None:
        return []
    return [frame.f_locals] if frame.f_locals is frame.f_globals else \
        [frame.f_locals, frame.f_globals]


def top_level_modules(namespace: dict) -> list:
    """The modules among `namespace`'s values that are not part of another one there."""
    modules = {id(value): value for name, value in namespace.items()
               if not name.startswith("_") and is_module(value)}
    inside = set()
    for module in modules.values():
        for _, submodule in module.named_modules():
            if submodule is not module:
                inside.add(id(submodule))
    return [module for key, module in modules.items() if key not in inside]


def _path_inside(outer, module) -> str | None:
    """The dotted path of `module` among `outer`'s submodules (not `outer` itself), or None."""
    if module is outer:
        return None
    for path, submodule in outer.named_modules():
        if submodule is module and path:
            return path
    return None


def _container_in(namespaces, module):
    """The outermost module among the namespaces' values that has `module` inside, or None."""
    containers = []
    for namespace in namespaces:
        for name, value in list(namespace.items()):
            if not name.startswith("_") and value is not module and is_module(value) and \
                    all(value is not other for other in containers) and \
                    _path_inside(value, module) is not None:
                containers.append(value)
    for container in containers:
        if all(_path_inside(other, container) is None for other in containers):
            return container
    return None


def _variable_holding(module, namespaces) -> str | None:
    for namespace in namespaces:
        for name, value in namespace.items():
            if value is module and not name.startswith("_") and name != "self":
                return name  # ("self": a model calling itself, named better by its class)
    return None
