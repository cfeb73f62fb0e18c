"""Handles returned by `register_hook`-style calls."""
from __future__ import annotations


class RemovableHandle:
    """Returned by `register_hook`; `handle.remove()` unregisters the hook.

    >>> hooks = []
    >>> handle = RemovableHandle(hooks, print)
    >>> handle.remove(); hooks
    []
    """

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook):
        hooks.append(hook)
        self._hooks, self._hook = hooks, hook

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
