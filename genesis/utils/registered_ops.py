"""genesis.utils's Functions in the op registry: importing this module registers checkpoint's
`OPS`, so gradcheck, the registry tests and `genesis gradcheck --ops checkpoint` cover it.

>>> import genesis
>>> from genesis.ops.registry import find_op
>>> find_op("checkpoint").family
'checkpoint'
"""
from __future__ import annotations

from ..ops.registry import register_family
from . import checkpoint

__all__ = []

register_family("checkpoint", checkpoint.OPS)
