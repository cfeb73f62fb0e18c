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
import warnings

from ..grad_state import grad_state
from ..inference_tensors import enter_inference_mode, inference_state, leave_inference_mode

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]




def is_grad_enabled() -> bool:
    """Whether grad mode is on for this thread: operations record a graph, unless inside
    `inference_mode()`, which records nothing even where grad mode is switched back on."""
    return grad_state.enabled or grad_state.enabled_in_inference


class _GradModeContext:
    """Base of the modes: `_switch()` applies the mode and returns what `_restore` needs to
    undo it. Usable with `with` and as a decorator; on a generator function the mode holds
    inside each resumption only (the caller's mode is back between `next` calls)."""

    _mode: bool

    def _switch(self):
        previous = grad_state.enabled, grad_state.enabled_in_inference
        if inference_state.depth:  # inference mode wins: grad mode is noted, nothing recorded
            grad_state.enabled_in_inference = self._mode
        else:
            grad_state.enabled = self._mode
        return previous

    def _restore(self, previous) -> None:
        grad_state.enabled, grad_state.enabled_in_inference = previous

    def clone(self):
        """A new mode object like this one (PyTorch's `_DecoratorContextManager.clone`)."""
        return self.__class__()

    def __enter__(self):
        self._previous = self._switch()
        return self

    def __exit__(self, *exc_info):
        self._restore(self._previous)
        return False

    def __call__(self, function):
        if inspect.isclass(function):
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To preserve "
                          "the current behavior of class decoration, you can directly decorate "
                          "the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
        if inspect.isgeneratorfunction(function):
            return _wrap_generator(function, self)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            previous = self._switch()
            try:
                return function(*args, **kwargs)
            finally:
                self._restore(previous)

        return wrapper


def _wrap_generator(function, mode: _GradModeContext):
    """`function`'s generators with `mode` in force while they run: on `next`/`send`, and on
    an exception thrown in (`throw`) or a `close()`, which reach the generator as they would
    undecorated."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        generator = function(*args, **kwargs)
        try:
            item = _resumed(mode, generator.send, None)
            while True:
                try:
                    to_send = yield item
                except GeneratorExit:
                    _resumed(mode, generator.close)
                    raise
                except BaseException as error:
                    item = _resumed(mode, generator.throw, error)
                else:
                    item = _resumed(mode, generator.send, to_send)
        except StopIteration as stop:
            return stop.value

    return wrapper


def _resumed(mode: _GradModeContext, step, *args):
    previous = mode._switch()
    try:
        return step(*args)
    finally:
        mode._restore(previous)


class _BareDecorator(_GradModeContext):
    """A mode also usable as a bare decorator (`@no_grad` as well as `@no_grad()`)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments (or a function, when used as a "
                            f"bare decorator), got {type(orig_func).__name__}")
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass


class no_grad(_BareDecorator):
    """Disable graph recording: results have `requires_grad=False`. A context manager, a
    decorator (`@no_grad()` or `@no_grad`), also of generator functions (the mode holds
    inside each resumption only).

    >>> import genesis
    >>> @genesis.no_grad
    ... def doubled(x):
    ...     return x * 2
    >>> doubled(genesis.ones(1, requires_grad=True)).requires_grad
    False
    """

    _mode = False


class inference_mode(_GradModeContext):
    """Inference mode, as PyTorch's: nothing is recorded (as `no_grad`), and the tensors made
    inside are inference tensors (`is_inference()`), which refuse to be saved for a backward
    or changed in place once the mode is over (clone one to get a normal tensor). A context
    manager or a decorator (`@inference_mode()`, `@inference_mode`); `inference_mode(False)`
    changes nothing.

    >>> import genesis
    >>> with inference_mode():
    ...     y = genesis.ones(2, requires_grad=True) * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __new__(cls, mode=True):
        if callable(mode):  # bare decorator: @inference_mode
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.enabled = bool(mode)

    @property
    def mode(self) -> bool:
        return self.enabled

    def clone(self):
        return self.__class__(self.enabled)

    def _switch(self):
        previous = grad_state.enabled, grad_state.enabled_in_inference, inference_state.depth
        grad_state.enabled_in_inference = False
        if self.enabled:
            enter_inference_mode()
            grad_state.enabled = False
        else:  # inference_mode(False): out of inference mode, grad recorded, as PyTorch's
            leave_inference_mode(levels=inference_state.depth)
            grad_state.enabled = True
        return previous

    def _restore(self, previous) -> None:
        enabled, grad_state.enabled_in_inference, depth = previous
        grad_state.enabled = enabled
        if self.enabled:
            leave_inference_mode()
        else:
            enter_inference_mode(levels=depth)


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()`."""
    return inference_state.depth > 0


class enable_grad(_BareDecorator):
    """Re-enable graph recording, e.g. inside a `no_grad` block; like `no_grad`, a context
    manager or a decorator, bare or called."""

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
        if mode.__class__ is not bool:  # as PyTorch's: a truthy 1 or "no" is a mistake
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self._mode = mode
        self._previous = self._switch()

    @property
    def mode(self) -> bool:
        return self._mode

    def clone(self):
        """A new set_grad_enabled(self.mode): like the first, it sets the mode at once."""
        return self.__class__(self._mode)

    def __enter__(self):
        return self  # already switched when made; __exit__ restores what was before

    def __call__(self, function):
        self._restore(self._previous)  # used as a decorator: undo the eager switch
        return super().__call__(function)

    def __repr__(self) -> str:
        return f"<set_grad_enabled({self._mode})>"
