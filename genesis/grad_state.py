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

__all__ = ["AutocastState", "Autocasts", "GlobalAutocast", "global_autocast", "FOLLOW_GLOBAL",
           "grad_state"]


class AutocastState(NamedTuple):
    """What autocast runs eligible ops under: `dtype`, and `device_type`, whose op rules
    apply ("cpu": PyTorch's CPU lists; "cuda", or None for genesis's `autocast(dtype)` form
    and the global switch: PyTorch's CUDA lists).

    >>> AutocastState(float16, "cpu").device_type
    'cpu'
    """

    dtype: DType
    device_type: str | None


class Autocasts(NamedTuple):
    """The autocast on each device type, as PyTorch keeps one per device type: an op's
    tensors on the CPU are cast by `cpu`, those on a GPU by `cuda` (None: off there).
    `autocast("cpu")` inside `autocast("cuda")` keeps both on; genesis's `autocast(dtype)`
    form and the global switch put one state in both.

    >>> state = AutocastState(float16, "cuda")
    >>> Autocasts(None, None).replaced("cuda", state).on("cuda") is state
    True
    """

    cpu: AutocastState | None
    cuda: AutocastState | None

    def on(self, device_type: str) -> AutocastState | None:
        """The autocast ops on `device_type` ("cpu", "cuda") run under."""
        return self.cpu if device_type == "cpu" else self.cuda

    def replaced(self, device_type: str, state: AutocastState | None) -> Autocasts | None:
        """These autocasts with `device_type`'s replaced by `state` (None when all are off)."""
        both = self._replace(cpu=state) if device_type == "cpu" else self._replace(cuda=state)
        return None if both.cpu is None and both.cuda is None else both


class GlobalAutocast:
    """The process-wide autocast switch, the spec's `genesis.enable_autocast = True`.

    The switch is a plain attribute, `enable_autocast`, of the object it is read from: the
    genesis package registers itself (`read_switch_from`), so what a user assigns there
    is what ops see; `set` also gives the dtype eligible ops run in while it is on.

    >>> switch = GlobalAutocast()
    >>> switch.set(True); switch.current().cpu.dtype
    genesis.float16
    >>> switch.set(False); switch.current() is None
    True
    """

    def __init__(self):
        self._switches = types.SimpleNamespace(enable_autocast=False)
        self._state = _everywhere(AutocastState(float16, None))

    def read_switch_from(self, switches) -> None:
        """Read `switches.enable_autocast` from now on (carrying the current value over)."""
        switches.enable_autocast = self._switches.enable_autocast
        self._switches = switches

    def set(self, enabled: bool, dtype=float16) -> None:
        self._switches.enable_autocast = bool(enabled)
        self._state = _everywhere(AutocastState(dtype, None))

    def current(self) -> Autocasts | None:
        """What eligible ops run under outside any `autocast(...)` context (None: off): the
        switch applies to every device, and has no device type, so CUDA's rules apply."""
        return self._state if self._switches.enable_autocast else None


def _everywhere(state: AutocastState) -> Autocasts:
    return Autocasts(state, state)


global_autocast = GlobalAutocast()
FOLLOW_GLOBAL = object()  # a thread outside any `autocast(...)` context


class _GradState(threading.local):
    enabled = True  # ops record a graph (never inside inference_mode)
    # Grad mode switched on inside inference_mode() (enable_grad there): is_grad_enabled()
    # says True, as PyTorch's, while `enabled` stays False, as inference mode wins.
    enabled_in_inference = False
    in_backward = False  # set by the engine while it runs backward formulas
    # Inside `with autocast(...)` on this thread: the Autocasts it set, or None when autocast
    # is off on every device type.
    local_autocast = FOLLOW_GLOBAL

    @property
    def autocast(self) -> Autocasts | None:
        """The autocasts eligible ops run under on this thread (None: off everywhere)."""
        local = self.local_autocast
        return global_autocast.current() if local is FOLLOW_GLOBAL else local

    def autocast_on(self, device_type: str) -> AutocastState | None:
        """The autocast ops on `device_type` run under on this thread (None: off there)."""
        autocasts = self.autocast
        return None if autocasts is None else autocasts.on(device_type)


grad_state = _GradState()
