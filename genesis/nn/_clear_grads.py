"""Clearing gradients: shared by `Module.zero_grad` and `Optimizer.zero_grad` (the
parameters whose gradients a call cleared are told to `genesis.nn._grad_edits`' listeners)."""
from __future__ import annotations

from ..device import writeable
from ..tensor import wrap_array
from ._grad_edits import tell_cleared

__all__ = ["clear_grads"]


def clear_grads(params, set_to_none: bool = True) -> None:
    """Set each parameter's `.grad` to None, or (`set_to_none=False`) to zeros, reusing its
    storage when it is a plain writable leaf."""
    cleared = []
    for param in params:
        grad = param._grad
        if grad is None:
            continue
        cleared.append(param)
        if set_to_none:
            param._grad = None
        elif grad.grad_fn is not None or not writeable(grad._data):
            param._grad = wrap_array(grad._device.xp.zeros_like(grad._data), grad._device)
        else:
            grad._data[...] = 0
            grad._version_counter[0] += 1
    tell_cleared(cleared, "zero_grad")
