"""`torch.ops`, served by genesis: `torch.ops.aten.<op>.<overload>` are the operator objects a
dispatch mode receives (`genesis.utils._python_dispatch`); `torch.ops.<namespace>.<op>` are
the custom ops `genesis.library` (served as `torch.library`) defines.

>>> str(aten.sin.default)
'aten.sin.default'
"""
from __future__ import annotations

from ..utils._python_dispatch import aten, namespaces

__all__ = ["aten"]


def __getattr__(name: str):
    """`torch.ops.mylib`: the namespace of that name, once an op was defined in it (PyTorch
    makes one for any name; tools probing this module's attributes must not get one)."""
    if name not in namespaces:
        raise AttributeError(f"torch.ops has no namespace {name!r}: no custom op was defined in it")
    return namespaces[name]
