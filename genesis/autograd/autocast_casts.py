"""The casts autocast makes to an op's tensor arguments: each tensor by the autocast of its
device type, under the op's rule for that autocast (genesis.autocast_rules). The casts are
ordinary differentiable ops, so each input's gradient comes back in its own dtype.

>>> import genesis
>>> from genesis.autocast_rules import LOWER
>>> with genesis.autocast("cpu", dtype=genesis.bfloat16):
...     a, b = autocast_inputs(LOWER, genesis.ones(2), genesis.ones(2, dtype=genesis.float64))
>>> a.dtype, b.dtype
(genesis.bfloat16, genesis.float64)
"""
from __future__ import annotations

from ..autocast_rules import AutocastRule
from ..dtypes import FLOATING_DTYPES, float32
from ..grad_state import Autocasts, AutocastState, grad_state
from ..tensor import Tensor

__all__ = ["autocast_arguments", "autocast_inputs", "outside_autocast"]

_TWO_BYTE_FLOATS = tuple(dtype for dtype in FLOATING_DTYPES if dtype.itemsize == 2)


def autocast_arguments(rule: AutocastRule, autocasts: Autocasts, args: tuple) -> tuple:
    """`args` with the floating tensors cast as `rule` says under `autocasts`, each by the
    autocast of its device type, as PyTorch's autocast("cpu") casts only CPU tensors and
    autocast("cuda") only GPU ones: "lower": float32 -> the autocast dtype; "float32":
    float16/bfloat16 -> float32; "promote": all to the widest of their dtypes; None: as they
    are. float64 is never lowered, as in PyTorch."""
    if autocasts.cpu is autocasts.cuda:  # genesis's autocast(dtype) form: every device alike
        return _cast(rule, autocasts.cpu, None, args)
    for device_type in ("cuda", "cpu"):
        state = autocasts.on(device_type)
        if state is not None:
            args = _cast(rule, state, device_type, args)
    return args


def _cast(rule: AutocastRule, autocast: AutocastState, device_type: str | None,
          args: tuple) -> tuple:
    """`args` with the floating tensors on `device_type` (None: on any device) cast as
    `rule` says under `autocast`."""
    policy = rule.on(autocast.device_type)
    if policy is None:
        return args
    if policy == "lower":
        target, eligible = autocast.dtype, (float32,)
    elif policy == "float32":
        target, eligible = float32, _TWO_BYTE_FLOATS
    else:
        floating = [arg.dtype for arg in args if _on(arg, device_type) and arg.is_floating_point()]
        if len(set(floating)) < 2:
            return args
        target, eligible = _widest(floating), FLOATING_DTYPES
    return tuple(arg.to(target) if _on(arg, device_type) and arg.dtype in eligible
                 and arg.dtype is not target else arg for arg in args)


def _on(arg, device_type: str | None) -> bool:
    """Whether `arg` is a tensor on `device_type` (None: on any device)."""
    return isinstance(arg, Tensor) and (device_type is None or arg._device.type == device_type)


def autocast_inputs(rule: AutocastRule, *tensors):
    """The inputs of a composite op (one written in other ops, such as addmm or mse_loss) cast
    as its `rule` says under the active autocast, as PyTorch casts them before the op
    decomposes; as they are when autocast is off. Non-tensors (None, numbers) pass through."""
    autocast = grad_state.autocast
    if autocast is None:
        return tensors
    return autocast_arguments(rule, autocast, tensors)


def _widest(dtypes: list):
    """The floating dtype all of `dtypes` promote to (float16 with bfloat16: float32)."""
    widest = max(dtypes, key=lambda dtype: dtype.itemsize)
    if widest.itemsize == 2 and len(set(dtypes)) > 1:
        return float32
    return widest


class outside_autocast:
    """`with outside_autocast():` runs the ops inside without autocast, as PyTorch runs the
    ops an autocast rule's op is made of (a composite casts its inputs by its own rule, then
    runs its parts here: mv on the CPU is not a lower-precision op, though matmul is).

    >>> import genesis
    >>> with genesis.autocast("cpu", dtype=genesis.bfloat16), outside_autocast():
    ...     (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype
    genesis.float32
    """

    def __enter__(self):
        self._previous = grad_state.local_autocast
        grad_state.local_autocast = None

    def __exit__(self, *exc_info):
        grad_state.local_autocast = self._previous
        return False
