"""Utilities for modules and their parameters, as `torch.nn.utils`: gradient clipping,
flattening parameters into one vector, folding an eval BatchNorm into the layer before it
(`fusion`), weight and spectral normalization (the older hook-based forms here, the newer
ones in `parametrizations`), `parametrize`, `prune`, and `rnn`, the packing of
variable-length sequences for the recurrent layers; `skip_init`."""
from . import fusion, parametrizations, parametrize, prune, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init_skipping import skip_init
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "parametrize", "parametrizations",
           "prune", "rnn", "skip_init"]
