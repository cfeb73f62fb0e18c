"""Functional forms of activations, losses and layers (`import genesis.nn.functional as F`).

Each family lives in its own module: activations, convolution, pooling, unfold/fold and pad
with the ops (`genesis.ops.activation`, `.convolution`, `.pooling`, ...); linear, bilinear,
dropout and embedding in `_layers`; the losses in `_pointwise_losses` and `_class_losses`;
the norms in `_norm_functions`; attention in `_attention`.

>>> import genesis
>>> import genesis.nn.functional as F
>>> F.relu(genesis.tensor([-1., 2.]))
tensor([0., 2.])
"""
from ..ops.activation import *  # noqa: F401,F403  (relu, gelu, softmax, ...)
from ..ops.activation import __all__ as _activation_names
from ..ops.adaptive_pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                                    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d)
from ..ops.conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d
from ..ops.convolution import conv1d, conv2d, conv3d
from ..ops.pad import pad
from ..ops.pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from ..ops.window import fold, unfold
from ._attention import *  # noqa: F401,F403
from ._attention import __all__ as _attention_names
from ._class_losses import *  # noqa: F401,F403
from ._composite_functions import *  # noqa: F401,F403
from ._composite_functions import __all__ as _composite_names
from ._margin_losses import *  # noqa: F401,F403
from ._margin_losses import __all__ as _margin_loss_names
from .instancenorm import instance_norm
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .upsampling import interpolate, upsample
from ._class_losses import __all__ as _class_loss_names
from ._layers import *  # noqa: F401,F403
from ._layers import __all__ as _layer_names
from ._norm_functions import *  # noqa: F401,F403
from ._norm_functions import __all__ as _norm_names
from ._pointwise_losses import *  # noqa: F401,F403
from ._pointwise_losses import __all__ as _pointwise_loss_names
from ._pooling_extras import *  # noqa: F401,F403  (max_unpool, lp_pool, local_response_norm, ...)
from ._pooling_extras import __all__ as _pooling_extra_names
from ._grid_sample import *  # noqa: F401,F403  (affine_grid, grid_sample)
from ._grid_sample import __all__ as _grid_sample_names
from ._multi_margin_losses import *  # noqa: F401,F403  (multi_margin_loss, ...)
from ._multi_margin_losses import __all__ as _multi_margin_loss_names
from ._ctc_loss import ctc_loss
from ._fractional_pooling import *  # noqa: F401,F403  (fractional_max_pool2d, ...)
from ._fractional_pooling import __all__ as _fractional_pooling_names
from ._channel_shuffle import channel_shuffle, native_channel_shuffle
from ._deprecated_functions import upsample_bilinear, upsample_nearest
from ._embedding_bag import embedding_bag
from ._inplace_activations import *  # noqa: F401,F403  (elu_, leaky_relu_, hardtanh_, ...)
from ._inplace_activations import __all__ as _inplace_activation_names
from ._noise_functions import alpha_dropout, feature_alpha_dropout, rrelu, rrelu_
from ._pdist import pdist

__all__ = list(_activation_names) + _layer_names + _pointwise_loss_names + _class_loss_names + \
    _norm_names + _attention_names + _composite_names + _margin_loss_names + [
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
        "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
        "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "unfold", "fold",
        "pad", "instance_norm", "pixel_shuffle", "pixel_unshuffle", "interpolate", "upsample"]
__all__ += _pooling_extra_names
__all__ += _grid_sample_names
__all__ += _inplace_activation_names + ["embedding_bag", "alpha_dropout", "feature_alpha_dropout",
                                        "rrelu", "rrelu_", "channel_shuffle", "native_channel_shuffle",
                                        "pdist", "upsample_nearest", "upsample_bilinear"]
__all__ += _multi_margin_loss_names
__all__ += ["ctc_loss"]
__all__ += _fractional_pooling_names
