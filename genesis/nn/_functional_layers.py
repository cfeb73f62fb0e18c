"""Functional layers and losses, gathered for `genesis.nn.functional`: each family lives in its
own private module (`_layers`, `_losses`, `_normalization`, `_attention`); convolution, pooling
unfold/fold and pad live with the ops (`genesis.ops.convolution`, `.pooling`,
`.adaptive_pooling`, `.window`, `.pad`)."""
from ._attention import *  # noqa: F401,F403
from ._attention import __all__ as _attention_names
from ._layers import *  # noqa: F401,F403
from ._layers import __all__ as _layer_names
from ._losses import *  # noqa: F401,F403
from ._losses import __all__ as _loss_names
from ._normalization import *  # noqa: F401,F403
from ._normalization import __all__ as _normalization_names
from ..ops.conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d
from ..ops.convolution import conv1d, conv2d, conv3d
from ..ops.adaptive_pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                                    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d)
from ..ops.pad import pad
from ..ops.pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from ..ops.window import fold, unfold

__all__ = _layer_names + _loss_names + _normalization_names + _attention_names + [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "unfold", "fold", "pad"]
