"""`WriteLog`: where tensors were changed in place while a run is traced, so that a saved
tensor modified before its backward is blamed on the line that modified it.

It listens to the core's in-place writes (`genesis.ops.inplace.write_listeners`: in-place
ops, `out=` arguments, `_foreach_*_` lists, storage changes) and to optimizer steps (which
write their parameters directly), and keeps, per storage (version counter), the last few
writes with the version each left behind and the user's line that made it. When backward
finds a saved tensor at a newer version than it was saved at, `writer_of` names the first
write after the save.

A write through `.data` changes the storage without a new version (in PyTorch too), so no
backward ever complains: the gradient is silently computed from the changed values. While
the steps are recorded (`start_recording`), the log notes which tensors each op saved and
which `.data` aliases the script made; a write through such an alias while an op that saved
its tensor still holds it is kept in `data_writes` (node, saved index, the line).

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

import weakref

from ..autograd import engine, function
from ..autograd.source import SourceLocation
from ..grad_state import grad_state
from ..ops.inplace import write_listeners
from ..tensor import Tensor, cut_listeners

__all__ = ["WriteLog", "PER_STORAGE"]

PER_STORAGE = 4  # writes kept per storage (the latest ones)


class WriteLog:
    """{id(version counter): (the counter, [(version after, source, what)])}."""

    def __init__(self, per_storage: int = PER_STORAGE):
        self.per_storage = per_storage
        self._writes: dict = {}
        self._listener = self.before_write
        self._observer, self._cut_listener = self._saw_op, self._saw_cut
        self._saved_by: dict = {}   # id(version counter) -> (counter, [(weakref node, index)])
        self._aliases: dict = {}    # id(alias's counter) -> (alias counter, original's counter)
        self.data_writes: list = []  # (weakref node, saved index, source) of .data writes
        self._recording = False
        # whether a node's backward has already run (set by the session): a write after it
        # changed nothing that backward used
        self.backward_ran = lambda node: False

    def start(self) -> None:
        write_listeners.add(self._listener)

    def stop(self) -> None:
        write_listeners.discard(self._listener)
        self.stop_recording()

    def start_recording(self) -> None:
        """Note saved tensors and `.data` aliases (the recorded steps)."""
        if not self._recording:
            function.observers.add(self._observer)
            cut_listeners.add(self._cut_listener)
            self._recording = True

    def stop_recording(self) -> None:
        if self._recording:
            function.observers.discard(self._observer)
            cut_listeners.discard(self._cut_listener)
            self._recording = False

    def before_write(self, tensor) -> None:
        """write listener: `tensor` is about to be changed in place (its version goes up)."""
        if grad_state.in_backward or engine.unwatched.depth:
            return
        counter = tensor._version_counter
        source = SourceLocation.capture(max_frames=2)
        self._note(counter, counter[0] + 1, source, "an in-place op")
        alias = self._aliases.get(id(counter))
        if alias is not None and alias[0] is counter:
            self._through_data(alias[1], source)

    def _saw_op(self, node, args, outputs) -> None:
        """observer: the tensors `node` saved for its backward, by storage."""
        saved = node._saved
        if not isinstance(saved, tuple) or engine.unwatched.depth:
            return
        for index, entry in enumerate(saved):
            if isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], Tensor):
                counter = entry[0]._version_counter
                held = self._saved_by.get(id(counter))
                if held is None or held[0] is not counter:
                    held = self._saved_by[id(counter)] = (counter, [])
                held[1].append((weakref.ref(node), index))

    def _saw_cut(self, tensor, alias, how: str) -> None:
        """cut listener: `.data` made an alias of `tensor` with a version counter of its own."""
        if how == ".data" and isinstance(alias, Tensor) and \
                alias._version_counter is not tensor._version_counter:
            self._aliases[id(alias._version_counter)] = (alias._version_counter,
                                                         tensor._version_counter)

    def _through_data(self, counter, source) -> None:
        """A write through a `.data` alias of the storage `counter` counts: the ops still
        holding a saved tensor of it will compute their backward from the changed values."""
        held = self._saved_by.get(id(counter))
        if held is None or held[0] is not counter:
            return
        for node_ref, index in held[1]:
            node = node_ref()
            if node is not None and isinstance(node._saved, tuple) and \
                    not self.backward_ran(node):  # its backward is still to come
                self.data_writes.append((node_ref, index, source))

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
