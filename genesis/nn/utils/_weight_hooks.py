"""The bookkeeping the older, hook-based weight and spectral normalization share: at most
one hook of a kind per parameter name, kept on the module with its handle.

>>> import genesis
>>> layer = genesis.nn.Linear(2, 2)
>>> class Hook:
...     def __call__(self, module, inputs): pass
...     def remove(self, module): print("undone")
>>> attach(layer, "weight_norm", "weight", Hook())
>>> _ = detach(layer, "weight_norm", "weight")
undone
"""
from __future__ import annotations

from ..module import Module

__all__ = ["refuse_second", "attach", "detach"]


def refuse_second(module: Module, kind: str, name: str) -> None:
    """Raise if parameter `name` of `module` has a `kind` hook already (check before
    changing the module)."""
    if name in module.__dict__.get(f"_{kind}_hooks", {}):
        raise RuntimeError(f"Cannot register two {kind} hooks on the same parameter {name}")


def attach(module: Module, kind: str, name: str, hook) -> None:
    """Run `hook` before each forward of `module` as its `kind` hook on parameter `name`."""
    hooks = module.__dict__.setdefault(f"_{kind}_hooks", {})
    hooks[name] = (hook, module.register_forward_pre_hook(hook))


def detach(module: Module, kind: str, name: str) -> Module:
    """Undo `attach`: the hook's `remove(module)` restores the parameter, and it stops."""
    hooks = module.__dict__.get(f"_{kind}_hooks", {})
    if name not in hooks:
        raise ValueError(f"{kind} of '{name}' not found in {module}")
    hook, handle = hooks.pop(name)
    hook.remove(module)
    handle.remove()
    return module
