"""`torch._C._nn`: of PyTorch's private neural-network bindings, only the test helper that
warns from a backward (to check that warnings raised in backward reach the caller).

>>> import genesis, warnings
>>> x = genesis.zeros((), requires_grad=True)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     _test_warn_in_autograd(x).backward()
>>> str(caught[0].message)
'Warn from backward'
"""
from __future__ import annotations

import warnings

from ..autograd.function import Function

__all__ = ["_test_warn_in_autograd"]


class _WarnInBackward(Function):
    """Passes its input through; its backward warns."""

    @staticmethod
    def forward(ctx, tensor):
        return tensor.clone()

    @staticmethod
    def backward(ctx, grad):
        warnings.warn("Warn from backward", UserWarning)
        return grad


def _test_warn_in_autograd(tensor):
    """`tensor`, copied, with a backward that warns "Warn from backward"."""
    return _WarnInBackward.apply(tensor)
