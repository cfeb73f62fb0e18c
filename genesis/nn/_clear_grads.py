"""Clearing gradients: shared by `Module.zero_grad` and `Optimizer.zero_grad`.

`listeners` (a hook point: objects with `cleared(params)`) are told the parameters whose
gradients a call cleared, after it (genesis.debug's optimizer watch names the line of a
zero_grad() between backward and step).
"""
from __future__ import annotations

from ..device import writeable
from ..listeners import Listeners
from ..tensor import wrap_array

__all__ = ["clear_grads", "listeners"]

listeners = Listeners()


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
    if listeners and cleared:
        for listener in listeners:
            listener.cleared(cleared)
