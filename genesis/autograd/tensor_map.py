"""`TensorMap`: a value per tensor, keyed by identity and held weakly.

Tools that watch a run note things about tensors (where a parameter was first used,
where a NaN came from) without keeping them alive. A `weakref.WeakKeyDictionary`
cannot serve: it looks keys up by `==`, which a Tensor answers elementwise. Here a
tensor is its `id()`, checked against a weak reference so a new tensor that reuses
a dead one's id never reads its entry, and an entry goes when its tensor is freed.

>>> import genesis
>>> notes = TensorMap()
>>> x = genesis.ones(2)
>>> notes[x] = "first seen at line 3"
>>> notes.get(x), x in notes, len(notes)
('first seen at line 3', True, 1)
>>> del x
>>> len(notes)
0
"""
from __future__ import annotations

import weakref

__all__ = ["TensorMap"]


class TensorMap:
    """Maps tensors (by identity, held weakly) to values."""

    __slots__ = ("_entries", "ids")

    def __init__(self):
        self._entries = {}  # id(tensor) -> (weak reference, value)
        # the same dict, to be read (never written) where a call costs too much: it is
        # empty exactly when the map is (`not notes.ids` on a hot path, not `len(notes)`)
        self.ids = self._entries

    def get(self, tensor, default=None):
        entry = self._entries.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else default

    def __contains__(self, tensor) -> bool:
        entry = self._entries.get(id(tensor))
        return entry is not None and entry[0]() is tensor

    def __setitem__(self, tensor, value) -> None:
        key, entries = id(tensor), self._entries

        def forget(reference, key=key):
            entry = entries.get(key)
            if entry is not None and entry[0] is reference:
                del entries[key]
        entries[key] = (weakref.ref(tensor, forget), value)

    def setdefault(self, tensor, make):
        """The value of `tensor`; `make()`'s, stored, when it has none."""
        entry = self._entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        value = make()
        self[tensor] = value
        return value

    def discard(self, tensor) -> None:
        """Forget `tensor`'s value, if it has one."""
        entry = self._entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            del self._entries[id(tensor)]

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
