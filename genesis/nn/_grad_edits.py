"""The hook point of changes made to gradients outside a backward call: `listeners`
(objects with `cleared(params, call)` and `edited(changes)`) are told

- `cleared(params, call)`: the call named `call` set these parameters' gradients to None
  or to zeros: "zero_grad" (a module's or an optimizer's), "clip_grad_value_" with
  clip_value 0 (a NaN stays NaN), "clip_grad_norm_" with max_norm 0 (genesis.debug's
  optimizer watch names the call when a step then applies none of the gradients a backward
  gave);
- `edited(changes)`: gradient clipping or a GradScaler's unscaling rescaled or clamped
  gradients in place, [(parameter, its gradient's version before)]: the same gradients,
  edited (genesis.debug's optimizer watch tells a step repeated on them from one given new
  gradients).

>>> class Printer:
...     def edited(self, changes):
...         print([version for _, version in changes])
>>> printer = Printer()
>>> listeners.add(printer)
>>> tell_edited([(None, 3)])
[3]
>>> listeners.discard(printer)
"""
from __future__ import annotations

from ..listeners import Listeners

__all__ = ["listeners", "tell_cleared", "tell_edited"]

listeners = Listeners()


def tell_cleared(params: list, call: str) -> None:
    """Tell the listeners the call named `call` set the gradients of `params` to None or zeros."""
    if listeners and params:
        for listener in listeners:
            listener.cleared(params, call)


def tell_edited(changes: list) -> None:
    """Tell the listeners gradients were edited in place: `changes` as `edited` takes them."""
    if listeners and changes:
        for listener in listeners:
            listener.edited(changes)
