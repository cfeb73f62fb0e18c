"""`Listeners`: where a hook point of genesis keeps the tools that listen to it.

Each hook point declares the small Protocol its listeners follow (`OpObserver` in
genesis.autograd.function, `BackwardListener` in genesis.autograd.engine, ...) and keeps
them in a `Listeners`. It is a list, so the hot path costs a list's truth test while
nobody listens, with `add` and `discard` to join and leave.

>>> class Printer:
...     def stepped(self, optimizer):
...         print("stepped")
>>> listeners = Listeners()
>>> printer = Printer()
>>> listeners.add(printer)
>>> for listener in listeners:
...     listener.stepped(None)
stepped
>>> listeners.discard(printer); len(listeners)
0
"""
from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Listeners"]

L = TypeVar("L")


class Listeners(list, Generic[L]):
    """The listeners of one hook point, told in the order they joined."""

    def add(self, listener: L) -> None:
        """Start telling `listener`."""
        self.append(listener)

    def add_first(self, listener: L) -> None:
        """Start telling `listener`, before those already listening (a profiler: its timing
        of a call should not include the other listeners' work on it)."""
        self.insert(0, listener)

    def discard(self, listener: L) -> None:
        """Stop telling `listener` (nothing happens if it is not listening)."""
        if listener in self:
            self.remove(listener)
