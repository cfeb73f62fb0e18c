"""Hooks: the handles `register_hook`-style calls return, and how hooks are run and checked.

A hook is user code run in the middle of genesis's own work (a backward pass, a module
call), so when it fails, or returns something unusable, the error names the hook (its
name, file and line) and where it was registered, not the op or module around it:

>>> import genesis
>>> x = genesis.ones(3, requires_grad=True)
>>> def halve(grad):
...     return grad[:1] / 2
>>> handle = x.register_hook(halve)
>>> (x * 2).sum().backward()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
RuntimeError: hook 'halve' (...:...), a hook on a leaf tensor of shape (3,), changed the shape of the gradient from (3,) to (1,); a hook must return None or a gradient of the same shape, dtype and device
"""
from __future__ import annotations

import functools
import os

from ..sizes import describe_value
from ..tensor import Tensor

__all__ = ["RemovableHandle", "describe_hook", "checked_hook", "run_hook", "checked_gradient",
           "checked_gradients", "checked_node_gradients", "hook_error"]


class RemovableHandle:
    """Returned by `register_hook`; `handle.remove()` unregisters the hook.

    >>> hooks = []
    >>> handle = RemovableHandle(hooks, print)
    >>> handle.remove(); hooks
    []
    """

    __slots__ = ("_hooks", "_hook", "id")
    next_id = 0  # each handle's `id`, counted up as PyTorch's

    def __init__(self, hooks: list, hook):
        hooks.append(hook)
        self._hooks, self._hook = hooks, hook
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
        return False


def checked_hook(hook, registration: str):
    """`hook` itself; a TypeError at registration when it can't be called (PyTorch would
    only fail at the first backward, far from the line that registered it)."""
    if not callable(hook):
        raise TypeError(f"{registration} expects a callable hook, got a "
                        f"{type(hook).__name__} ({hook!r:.40})")
    return hook


def describe_hook(hook) -> str:
    """How an error names a hook: its name and where it is defined.

    >>> def scale(grad):
    ...     return grad * 2
    >>> describe_hook(scale)  # doctest: +ELLIPSIS
    "hook 'scale' (...)"
    """
    target = hook.func if isinstance(hook, functools.partial) else hook
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    code = getattr(target, "__code__", None) or getattr(type(target).__call__, "__code__", None)
    if code is None:  # a builtin or C function
        return f"hook '{name}'"
    return f"hook '{name}' ({_short_path(code.co_filename)}:{code.co_firstlineno})"


def _short_path(path: str) -> str:
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return path if relative.startswith("..") else relative


def run_hook(hook, args: tuple, where):
    """`hook(*args)`; an exception it raises gets a note naming the hook and `where` it runs
    ("a hook on output 0 of MulBackward": a str, or a function making it, called only for a
    message), and the attribute `hook`, so the backward engine does not blame the op whose
    backward was running."""
    try:
        return hook(*args)
    except Exception as error:
        if getattr(error, "hook", None) is None:
            error.hook = hook
            error.add_note(f"(raised by {describe_hook(hook)}, {_text(where)})")
        raise


def _text(where) -> str:
    return where if isinstance(where, str) else where()


def checked_gradient(hook, where, new, old: Tensor, what: str = "the gradient") -> Tensor:
    """A hook's replacement `new` for the gradient `old` (`what`, in messages): a Tensor of
    the same shape, dtype and device, else an error naming the hook (a TypeError for a
    non-tensor, a RuntimeError for a changed shape, dtype or device, as in PyTorch)."""
    if not isinstance(new, Tensor):
        raise hook_error(TypeError, hook, f"{_text(where)}, returned {describe_value(new)} for "
                         f"{what}; a hook must return None or a Tensor (the replacement gradient)")
    if new._data.shape == old._data.shape and new._data.dtype == old._data.dtype \
            and new._device is old._device:
        return new
    if new._data.shape != old._data.shape:
        change = f"shape of {what} from {tuple(old.shape)} to {tuple(new.shape)}"
    elif new._data.dtype != old._data.dtype:
        change = f"dtype of {what} from {old.dtype.name} to {new.dtype.name}"
    else:
        change = f"device of {what} from {old.device} to {new.device}"
    raise hook_error(RuntimeError, hook, f"{_text(where)}, changed the {change}; a hook must "
                     "return None or a gradient of the same shape, dtype and device")


def checked_gradients(hook, where, new, old: tuple, what: str = "grads") -> tuple:
    """A hook's replacement for the gradients `old` (`what`, in messages; a Tensor is taken
    as a 1-tuple): one entry per old one, each None or a gradient as `checked_gradient`
    requires (a gradient where there was None is taken as it is)."""
    if isinstance(new, Tensor):
        new = (new,)
    elif not isinstance(new, tuple | list):
        raise hook_error(TypeError, hook, f"{_text(where)}, returned {describe_value(new)}; it must "
                         f"return None or a tuple of {len(old)} gradient(s) ({what}: Tensor or "
                         "None each)")
    if len(new) != len(old):
        raise hook_error(RuntimeError, hook, f"{_text(where)}, returned {len(new)} gradient(s) "
                         f"for {what}, which has {len(old)}; return one Tensor or None per entry, "
                         "in order")
    return tuple(value if value is None or before is None and isinstance(value, Tensor)
                 else checked_gradient(hook, where, value, before, f"{what}[{index}]")
                 for index, (value, before) in enumerate(zip(new, old)))


def checked_node_gradients(hook, where, new, old: tuple, what: str) -> tuple:
    """The replacement a hook of a graph node (`grad_fn.register_hook`/`register_prehook`)
    returned, checked as PyTorch checks it: a tuple (a TypeError for a lone Tensor or any
    other value), None wherever `old` has None (a RuntimeError: the node has no gradient
    there to replace), each other entry as `checked_gradients` requires."""
    if new.__class__ not in (tuple, list):
        raise hook_error(TypeError, hook, f"{_text(where)}, expected tuple, but hook returned "
                         f"'{type(new).__name__}': return a tuple of {len(old)} gradient(s) "
                         f"({what}: Tensor or None each)")
    for index, (value, before) in enumerate(zip(new, old)):
        if before is None and value is not None:
            raise hook_error(RuntimeError, hook, f"{_text(where)}, can't replace a None gradient "
                             f"with a non-None value: {what}[{index}] is None (no gradient flows "
                             "there), so the hook must leave it None")
    return checked_gradients(hook, where, new, old, what)


def hook_error(kind: type, hook, message: str) -> Exception:
    """An error about what `hook` returned, marked with it (see `run_hook`)."""
    error = kind(f"{describe_hook(hook)}, {message}")
    error.hook = hook
    return error
