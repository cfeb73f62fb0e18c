"""Whether this thread records a graph, and the autocast state ops read: the state the grad
modes (`genesis.autograd.grad_mode`) switch. It sits below the tensor so that a tensor can
ask (`Tensor.numpy` allows a tensor that requires grad under no_grad, as PyTorch does).

>>> grad_state.enabled
True
"""
from __future__ import annotations

import threading
import types
from typing import NamedTuple

from .dtypes import DType, float16

__all__ = ["AutocastState", "GlobalAutocast", "global_autocast", "FOLLOW_GLOBAL", "grad_state"]


class AutocastState(NamedTuple):
    """What autocast runs eligible ops under: `dtype`, and `device_type`, whose op rules
    apply ("cpu": PyTorch's CPU lists; "cuda", or None for genesis's `autocast(dtype)` form
    and the global switch: PyTorch's CUDA lists).

    >>> AutocastState(float16, "cpu").device_type
    'cpu'
    """

    dtype: DType
    device_type: str | None


class GlobalAutocast:
    """The process-wide autocast switch, the spec's `genesis.enable_autocast = True`.

    The switch is a plain attribute, `enable_autocast`, of the object it is read from: the
    genesis package registers itself (`read_switch_from`), so what a user assigns there
    is what ops see; `set` also gives the dtype eligible ops run in while it is on.

    >>> switch = GlobalAutocast()
    >>> switch.set(True); switch.current().dtype
    genesis.float16
    >>> switch.set(False); switch.current() is None
    True
    """

    def __init__(self):
        self._switches = types.SimpleNamespace(enable_autocast=False)
        self._state = AutocastState(float16, None)

    def read_switch_from(self, switches) -> None:
        """Read `switches.enable_autocast` from now on (carrying the current value over)."""
        switches.enable_autocast = self._switches.enable_autocast
        self._switches = switches

    def set(self, enabled: bool, dtype=float16) -> None:
        self._switches.enable_autocast = bool(enabled)
        self._state = AutocastState(dtype, None)

    def current(self) -> AutocastState | None:
        """What eligible ops run under outside any `autocast(...)` context (None: off); the
        switch has no device type, so CUDA's rules apply."""
        return self._state if self._switches.enable_autocast else None


global_autocast = GlobalAutocast()
FOLLOW_GLOBAL = object()  # a thread outside any `autocast(...)` context


class _GradState(threading.local):
    enabled = True  # ops record a graph (never inside inference_mode)
    # Grad mode switched on inside inference_mode() (enable_grad there): is_grad_enabled()
    # says True, as PyTorch's, while `enabled` stays False, as inference mode wins.
    enabled_in_inference = False
    in_backward = False  # set by the engine while it runs backward formulas
    # Inside `with autocast(...)` on this thread: its AutocastState, or None when it turns
    # autocast off.
    local_autocast = FOLLOW_GLOBAL

    @property
    def autocast(self) -> AutocastState | None:
        """The autocast eligible ops run under on this thread (None: off)."""
        local = self.local_autocast
        return global_autocast.current() if local is FOLLOW_GLOBAL else local

    @property
    def autocast_dtype(self):
        """The dtype `genesis.autocast` runs eligible ops in on this thread (None: off)."""
        state = self.autocast
        return None if state is None else state.dtype


grad_state = _GradState()
