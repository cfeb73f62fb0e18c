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
from . import _channel_shuffle, _embedding_bag, _noise_functions, _pdist
from . import _ctc_loss, _fractional_pooling, _grid_sample, _pooling_extras

__all__ = []

register_family("layers", _layers.OPS)
register_family("losses", _pointwise_losses.OPS)
register_family("class_losses", _class_losses.OPS)
register_family("normalization", _norm_functions.OPS)
register_family("attention", _attention.OPS)
register_family("pooling_extras", _pooling_extras.OPS)
register_family("embedding_bag", _embedding_bag.OPS)
register_family("random_layers", _noise_functions.OPS)
register_family("channel_shuffle", _channel_shuffle.OPS)
register_family("pdist", _pdist.OPS)
register_family("grid_sample", _grid_sample.OPS)
register_family("ctc_loss", _ctc_loss.OPS)
register_family("fractional_pooling", _fractional_pooling.OPS)
