"""nn's Functions in the op registry: importing this module registers each family's `OPS`,
so gradcheck, the registry tests and `genesis gradcheck --ops layer_norm` cover them.

>>> import genesis
>>> from genesis.ops.registry import find_op
>>> find_op("layer_norm").family
'normalization'
"""
from __future__ import annotations

from ..ops.registry import register_family
from . import _attention, _class_losses, _layers, _norm_functions, _pointwise_losses

__all__ = []

register_family("layers", _layers.OPS)
register_family("losses", _pointwise_losses.OPS)
register_family("class_losses", _class_losses.OPS)
register_family("normalization", _norm_functions.OPS)
register_family("attention", _attention.OPS)
