"""`WriteLog`: where tensors were changed in place while a run is traced, so that a saved
tensor modified before its backward is blamed on the line that modified it.

It listens to the core's in-place writes (`genesis.ops.inplace.write_listeners`: in-place
ops, `out=` arguments, `_foreach_*_` lists, storage changes) and to optimizer steps (which
write their parameters directly), and keeps, per storage (version counter), the last few
writes with the version each left behind and the user's line that made it. When backward
finds a saved tensor at a newer version than it was saved at, `writer_of` names the first
write after the save.

>>> import genesis
>>> log = WriteLog()
>>> log.start()
>>> x = genesis.ones(3)
>>> x.mul_(2)
tensor([2., 2., 2.])
>>> log.stop()
>>> source, what = log.writer_of(x, saved_version=0)
>>> what, source.line > 0
('an in-place op', True)
"""
from __future__ import annotations

from ..autograd import engine
from ..autograd.source import SourceLocation
from ..grad_state import grad_state
from ..ops.inplace import write_listeners

__all__ = ["WriteLog", "PER_STORAGE"]

PER_STORAGE = 4  # writes kept per storage (the latest ones)


class WriteLog:
    """{id(version counter): (the counter, [(version after, source, what)])}."""

    def __init__(self, per_storage: int = PER_STORAGE):
        self.per_storage = per_storage
        self._writes: dict = {}
        self._listener = self.before_write

    def start(self) -> None:
        write_listeners.add(self._listener)

    def stop(self) -> None:
        write_listeners.discard(self._listener)

    def before_write(self, tensor) -> None:
        """write listener: `tensor` is about to be changed in place (its version goes up)."""
        if grad_state.in_backward or engine.unwatched.depth:
            return
        counter = tensor._version_counter
        self._note(counter, counter[0] + 1, SourceLocation.capture(max_frames=2),
                   "an in-place op")

    def optimizer_stepped(self, optimizer) -> None:
        """An optimizer wrote its parameters (those with a gradient) directly."""
        source = SourceLocation.capture(max_frames=2)
        what = f"{type(optimizer).__name__}.step()"
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param._grad is not None:
                    counter = param._version_counter
                    self._note(counter, counter[0], source, what)

    def _note(self, counter, version_after: int, source, what: str) -> None:
        entry = self._writes.get(id(counter))
        if entry is None or entry[0] is not counter:
            entry = self._writes[id(counter)] = (counter, [])
        writes = entry[1]
        writes.append((version_after, source, what))
        if len(writes) > self.per_storage:
            del writes[0]

    def writer_of(self, tensor, saved_version: int):
        """(source, what) of the first write that took `tensor`'s storage past
        `saved_version`, among those kept; None if none is known."""
        counter = tensor._version_counter
        entry = self._writes.get(id(counter))
        if entry is None or entry[0] is not counter:
            return None
        for version_after, source, what in entry[1]:
            if version_after > saved_version:
                return source, what
        return None
