"""`torch.ops`, served by genesis: `torch.ops.aten.<op>.<overload>` are the operator objects a
dispatch mode receives (`genesis.utils._python_dispatch`).

>>> str(aten.sin.default)
'aten.sin.default'
"""
from __future__ import annotations

from ..utils._python_dispatch import aten

__all__ = ["aten"]
