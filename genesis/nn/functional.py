"""Functional forms of activations, losses and layers (`import genesis.nn.functional as F`)."""
from ..ops.activation import *  # noqa: F401,F403  (relu, gelu, softmax, ...)
from ..ops.activation import __all__ as _activation_names
from ._functional_layers import *  # noqa: F401,F403  (linear, dropout, conv2d, losses, ...)
from ._functional_layers import __all__ as _layer_names

__all__ = list(_activation_names) + list(_layer_names)
