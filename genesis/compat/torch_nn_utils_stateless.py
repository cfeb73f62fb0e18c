"""`torch.nn.utils.stateless`: PyTorch's older home of `functional_call`, deprecated there
for `torch.func.functional_call`; genesis.func's, with PyTorch's FutureWarning."""
from __future__ import annotations

import warnings

from ..func import module_calls

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """`genesis.func.functional_call` with one dict of parameters and buffers."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return module_calls.functional_call(module, parameters_and_buffers, args, kwargs,
                                        tie_weights=tie_weights, strict=strict)
