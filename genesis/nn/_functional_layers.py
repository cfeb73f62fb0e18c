"""Functional layers and losses, gathered for `genesis.nn.functional`: each family lives in its
own private module (`_layers`, `_losses`, `_normalization`, `_attention`)."""
from ._attention import *  # noqa: F401,F403
from ._attention import __all__ as _attention_names
from ._layers import *  # noqa: F401,F403
from ._layers import __all__ as _layer_names
from ._losses import *  # noqa: F401,F403
from ._losses import __all__ as _loss_names
from ._normalization import *  # noqa: F401,F403
from ._normalization import __all__ as _normalization_names

__all__ = _layer_names + _loss_names + _normalization_names + _attention_names
