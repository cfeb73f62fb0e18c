"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, thread-local.

Each works as a context manager and as a decorator; `set_grad_enabled(False)`
also works as a plain call, as in PyTorch.

>>> import genesis
>>> x = genesis.tensor([1.0], requires_grad=True)
>>> with genesis.no_grad():
...     (x * 2).requires_grad
False
"""
from __future__ import annotations

import functools
import inspect
import threading
import types

from ..dtypes import float16

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class GlobalAutocast:
    """The process-wide autocast switch, the spec's `genesis.enable_autocast = True`.

    The switch is a plain attribute, `enable_autocast`, of the object it is read from: the
    genesis package registers itself (`read_switch_from`), so what a user assigns there
    is what ops see. `dtype` is what eligible ops run in while it is on.

    >>> switch = GlobalAutocast()
    >>> switch.set(True); switch.current()
    genesis.float16
    >>> switch.set(False); switch.current() is None
    True
    """

    def __init__(self):
        self._switches = types.SimpleNamespace(enable_autocast=False)
        self.dtype = float16

    def read_switch_from(self, switches) -> None:
        """Read `switches.enable_autocast` from now on (carrying the current value over)."""
        switches.enable_autocast = self._switches.enable_autocast
        self._switches = switches

    def set(self, enabled: bool, dtype=float16) -> None:
        self._switches.enable_autocast = bool(enabled)
        self.dtype = dtype

    def current(self):
        """The dtype eligible ops run in outside any `autocast(...)` context (None: off)."""
        return self.dtype if self._switches.enable_autocast else None


global_autocast = GlobalAutocast()
FOLLOW_GLOBAL = object()  # a thread outside any `autocast(...)` context


class _GradState(threading.local):
    enabled = True
    in_backward = False  # set by the engine while it runs backward formulas
    # Inside `with autocast(...)` on this thread: its dtype, or None when it turns autocast off.
    local_autocast = FOLLOW_GLOBAL

    @property
    def autocast_dtype(self):
        """The dtype `genesis.autocast` runs eligible ops in on this thread (None: off)."""
        local = self.local_autocast
        return global_autocast.current() if local is FOLLOW_GLOBAL else local


grad_state = _GradState()


def is_grad_enabled() -> bool:
    """Whether operations on this thread currently record a graph."""
    return grad_state.enabled


class _GradModeContext:
    """Base: subclasses set `_mode`; usable with `with` and as a decorator."""

    _mode: bool

    def __enter__(self):
        self._previous = grad_state.enabled
        grad_state.enabled = self._mode
        return self

    def __exit__(self, *exc_info):
        grad_state.enabled = self._previous
        return False

    def __call__(self, function):
        mode = self._mode
        if inspect.isgeneratorfunction(function):
            return _wrap_generator(function, mode)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            previous = grad_state.enabled
            grad_state.enabled = mode
            try:
                return function(*args, **kwargs)
            finally:
                grad_state.enabled = previous

        return wrapper


def _wrap_generator(function, mode):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        generator = function(*args, **kwargs)
        to_send = None
        while True:
            previous = grad_state.enabled
            grad_state.enabled = mode
            try:
                item = generator.send(to_send)
            except StopIteration as stop:
                return stop.value
            finally:
                grad_state.enabled = previous
            to_send = yield item

    return wrapper


class no_grad(_GradModeContext):
    """Disable graph recording: results have `requires_grad=False`."""

    _mode = False


class inference_mode(_GradModeContext):
    """Inference mode: as `no_grad` (nothing is recorded), a context manager or a decorator
    (`@inference_mode()`, `@inference_mode`); `inference_mode(False)` changes nothing.
    PyTorch's inference tensors, which refuse later use in autograd, are not modelled: a
    tensor made here is an ordinary tensor that does not require grad.

    >>> import genesis
    >>> with inference_mode():
    ...     y = genesis.ones(2, requires_grad=True) * 2
    >>> y.requires_grad
    False
    """

    def __new__(cls, mode=True):
        if callable(mode):  # bare decorator: @inference_mode
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.enabled = bool(mode)

    @property
    def _mode(self) -> bool:
        return False if self.enabled else grad_state.enabled

    def __enter__(self):
        _inference.depth += self.enabled
        return super().__enter__()

    def __exit__(self, *exc_info):
        _inference.depth -= self.enabled
        return super().__exit__(*exc_info)

    def __call__(self, function):
        if not self.enabled:
            return function
        wrapped = super().__call__(function)

        @functools.wraps(function)
        def counted(*args, **kwargs):
            _inference.depth += 1
            try:
                return wrapped(*args, **kwargs)
            finally:
                _inference.depth -= 1

        return wrapped if inspect.isgeneratorfunction(function) else counted


class _InferenceDepth(threading.local):
    depth = 0


_inference = _InferenceDepth()


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()`."""
    return _inference.depth > 0


class enable_grad(_GradModeContext):
    """Re-enable graph recording, e.g. inside a `no_grad` block."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to `mode`: immediately as a call, or scoped with `with`.

    >>> set_grad_enabled(False); is_grad_enabled()
    <...>
    False
    >>> set_grad_enabled(True); is_grad_enabled()
    <...>
    True
    """

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._previous = grad_state.enabled
        grad_state.enabled = self._mode

    def __enter__(self):
        return self

    def __call__(self, function):
        grad_state.enabled = self._previous  # used as a decorator: undo the eager switch
        return super().__call__(function)

    def __repr__(self) -> str:
        return f"<set_grad_enabled({self._mode})>"
