"""How autograd tracks views and versions: PyTorch's private switches that code and tests call
(`torch.autograd._force_original_view_tracking`, `_unsafe_preserve_version_counter`), and the
`SavedTensor` type.

>>> import genesis
>>> x = genesis.ones(2)
>>> with _unsafe_preserve_version_counter(x):
...     _ = x.add_(1)
>>> x._version
0
"""
from __future__ import annotations

import functools

from ..tensor import Tensor

__all__ = ["_force_original_view_tracking", "_unsafe_preserve_version_counter", "SavedTensor",
           "is_view_replay_enabled"]

_view_replay = [False]


def is_view_replay_enabled() -> bool:
    """Whether `_force_original_view_tracking(True)` is in force.

    >>> is_view_replay_enabled()
    False
    """
    return _view_replay[0]


class _force_original_view_tracking:
    """Ask autograd to rebuild views of views by replaying the original view ops (`mode`
    True) rather than with `as_strided`. genesis always replays a view's recorded steps, so
    the flag changes nothing but is kept and read back (`is_view_replay_enabled`). Like
    PyTorch's, it takes effect when made (a plain call sets it) and, used as a context
    manager or decorator, is restored on exit.

    >>> with _force_original_view_tracking(True):
    ...     is_view_replay_enabled()
    True
    >>> is_view_replay_enabled()
    False
    """

    def __init__(self, mode: bool):
        self.previous = _view_replay[0]
        self.mode = bool(mode)
        _view_replay[0] = self.mode

    def __enter__(self) -> None:
        _view_replay[0] = self.mode

    def __exit__(self, *args) -> None:
        _view_replay[0] = self.previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _force_original_view_tracking(self.mode):
                return fn(*args, **kwargs)
        _view_replay[0] = self.previous
        return wrapper

    def clone(self):
        return _force_original_view_tracking(self.mode)


class _unsafe_preserve_version_counter:
    """Context manager: on exit, set the version counter of `tensor` (or of each of a tuple of
    tensors) back to its value on entry, hiding in-place changes made inside from autograd's
    checks. Unsafe: a saved tensor changed inside is not caught.
    """

    def __init__(self, tensor):
        self.tensors = (tensor,) if isinstance(tensor, Tensor) else tuple(tensor)
        self.versions = tuple(t._version_counter[0] for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        for tensor, version in zip(self.tensors, self.versions):
            tensor._version_counter[0] = version


class SavedTensor:
    """The type PyTorch gives a node's handle on one saved tensor (`grad_fn._raw_saved_<name>`).
    genesis's nodes expose no such handles; as in PyTorch, one cannot be made from Python.

    >>> SavedTensor()
    Traceback (most recent call last):
    ...
    RuntimeError: Trying to create a SavedTensor object from Python is forbidden: saved tensors are made by autograd when a Function calls ctx.save_for_backward
    """

    def __init__(self):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden: saved "
                           "tensors are made by autograd when a Function calls "
                           "ctx.save_for_backward")
