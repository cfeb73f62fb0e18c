"""The static scan behind `genesis compat`: every torch name a script uses, found in its
source without running it, and whether genesis serves it under `genesis trace --torch`.

A use is an import (`import torch.nn as nn`, `from torch.optim import Adam`) or an
attribute chain that starts at a name such an import bound (`nn.Linear`,
`torch.cuda.is_available`, `F.relu`). Methods called on values (`x.topk(3)`) are not seen:
which object a value is, only running the script tells.

>>> uses = torch_uses("import torch.nn as nn\\nlayer = nn.Linear(2, 3)\\n", "model.py")
>>> [(use.name, use.line) for use in uses]
[('torch.nn', 1), ('torch.nn.Linear', 2)]
>>> missing(uses[1].name), missing("torch.fft.rfft")
(None, 'torch.fft')
"""
from __future__ import annotations

import ast
import importlib
import types
from dataclasses import dataclass

from .stand_in import _MISSING, resolve
from .torch_modules import MODULES

__all__ = ["TorchUse", "torch_uses", "missing", "ScanError"]


@dataclass(frozen=True)
class TorchUse:
    """One use of a torch name: the full dotted name, and where (file, line)."""

    name: str
    file: str
    line: int


class ScanError(ValueError):
    """A script that cannot be scanned (it does not parse); the message names file and line."""


def torch_uses(source: str, filename: str) -> list:
    """The torch names `source` uses, in the order they appear (file order, then line)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as error:
        raise ScanError(f"{filename}:{error.lineno}: does not parse ({error.msg}); "
                        "fix the syntax error to scan it") from None
    bound = {}  # local name -> the torch name it stands for
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_torch(alias.name):
                    uses.append(TorchUse(alias.name, filename, node.lineno))
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_torch(node.module or ""):
            uses.append(TorchUse(node.module, filename, node.lineno))
            for alias in node.names:
                if alias.name != "*":
                    name = f"{node.module}.{alias.name}"
                    uses.append(TorchUse(name, filename, node.lineno))
                    bound[alias.asname or alias.name] = name
    chains = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in chains:
            dotted = _dotted(node, chains)
            if dotted is not None:
                root, _, rest = dotted.partition(".")
                if root in bound:
                    uses.append(TorchUse(f"{bound[root]}.{rest}", filename, node.lineno))
    return sorted(uses, key=lambda use: use.line)


def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def _dotted(node: ast.Attribute, chains: set) -> str | None:
    """`a.b.c` for the outermost attribute of a chain of names (marking the inner ones as
    seen, so each chain counts once); None when the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        chains.add(id(node))
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def missing(name: str) -> str | None:
    """The first part of the torch name `name` that genesis does not serve (a module, or an
    attribute on the way), or None when genesis serves all of it. A name that is a genesis
    module but no served torch module counts as missing: `import` of it would fail."""
    parts = name.split(".")
    served = max((count for count in range(1, len(parts) + 1)
                  if ".".join(parts[:count]) in MODULES), default=0)
    if served == 0:
        return parts[0]
    target = MODULES[".".join(parts[:served])]
    value = None if target is None else importlib.import_module(target)
    for count in range(served + 1, len(parts) + 1):
        prefix = ".".join(parts[:count])
        if count == served + 1:  # an attribute of a served module (renamed ones included)
            value = resolve(prefix, value, parts[count - 1])
        else:
            value = getattr(value, parts[count - 1], _MISSING)
        if value is _MISSING:
            return prefix
    if isinstance(value, types.ModuleType) and name not in MODULES:
        return name
    return None
