"""`torch.jit` under genesis: `script` and `trace` return the module or function they are
given, to run eagerly (TorchScript's own compilation, saving and loading are not there);
`ignore`, `unused` and `export` are the decorators that change nothing in eager code."""
from __future__ import annotations

__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing"]


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """The module or function itself, run eagerly.

    >>> script(len) is len
    True
    """
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """The module or function itself, run eagerly (the example inputs are not needed)."""
    return func


def ignore(drop=False, **kwargs):
    """As a decorator (with or without arguments): the function itself."""
    return drop if callable(drop) else (lambda function: function)


def unused(function):
    """The function itself."""
    return function


def export(function):
    """The function itself."""
    return function


def is_scripting() -> bool:
    """False: genesis never compiles to TorchScript."""
    return False


def is_tracing() -> bool:
    """False: genesis never traces to TorchScript."""
    return False
