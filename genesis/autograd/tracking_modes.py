"""How autograd tracks views and versions: PyTorch's private switches that code and tests call
(`torch.autograd._force_original_view_tracking`, `_unsafe_preserve_version_counter`,
`_unsafe_set_version_counter`).

>>> import genesis
>>> x = genesis.ones(2)
>>> with _unsafe_preserve_version_counter(x):
...     _ = x.add_(1)
>>> x._version
0
"""
from __future__ import annotations

import functools

from ..ops.views import view_replay as _view_replay
from ..tensor import Tensor

__all__ = ["_force_original_view_tracking", "_unsafe_preserve_version_counter",
           "_unsafe_set_version_counter", "is_view_replay_enabled"]


def is_view_replay_enabled() -> bool:
    """Whether `_force_original_view_tracking(True)` is in force.

    >>> is_view_replay_enabled()
    False
    """
    return _view_replay[0]


class _force_original_view_tracking:
    """Ask autograd to rebuild the grad_fn of a view whose storage changed in place by
    replaying the original view ops on its base (`mode` True: the grad_fn is the last view
    op's node) rather than as one `as_strided` (AsStridedBackward); the gradients are the
    same. The flag is read back by `is_view_replay_enabled`. Like
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


def _unsafe_set_version_counter(tensors: tuple, versions: tuple) -> None:
    """Set the version counter of each of `tensors` to the matching entry of `versions`
    (`torch._C._autograd._unsafe_set_version_counter`). Unsafe: autograd's checks of saved
    tensors compare against these numbers.

    >>> import genesis
    >>> x = genesis.ones(2)
    >>> _ = x.add_(1)
    >>> _unsafe_set_version_counter((x,), (0,))
    >>> x._version
    0
    """
    if len(tensors) != len(versions):
        raise RuntimeError(f"_unsafe_set_version_counter: got {len(tensors)} tensors but "
                           f"{len(versions)} versions; give one version per tensor")
    for tensor, version in zip(tensors, versions):
        if version < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {version}")
        tensor._version_counter[0] = int(version)
