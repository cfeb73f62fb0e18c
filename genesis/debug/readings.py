"""`Readings`: small device values the host needs, fetched together in one transfer.

Reading a GPU value on the host waits for every kernel queued before it, so a
debugging hook that reads one figure per op would stall the GPU once per op.
The hooks of `genesis trace` hand their figures (0-d device arrays: a count, a
sum, a norm) to a `Readings` with a function to call once they are known; the
figures stay on the device until `fetch()`, which brings all of them over in
one transfer and calls the functions in the order the figures were read. A
session fetches at the end of every backward call and when it stops, and
`limit` bounds what waits in between.

On the CPU nothing is waited for: figures of NumPy arrays are passed on at once.
Host work that is cheaper done for many arrays together (the statistics of small
arrays, `genesis.debug.stats`) registers with `on_fetch` and is done first in each
`fetch()`.

>>> import numpy as np
>>> readings = Readings()
>>> seen = []
>>> readings.read(np, [np.float32(2.5), np.int64(3)], seen.append)
>>> seen
[[2.5, 3.0]]
"""
from __future__ import annotations

import numpy as np

__all__ = ["Readings"]

_SCRATCH = 4096  # float64 slots per zeroed scratch buffer
_NUMPY_VALUES = (np.ndarray, np.generic)


class Readings:
    """Figures waiting on a device; `read` them, `fetch()` passes them on together."""

    def __init__(self, limit: int = 4096):
        self.limit = limit
        self.transfers = 0     # host syncs made by fetch(), for tests and benchmarks
        self._waiting = []     # (namespace, figures, then) in the order read
        self._scratch = {}     # id(namespace) -> (zeroed buffer, slots handed out)
        self._slots = {}       # id(slot) -> (slot, its buffer, where it starts there)
        self._on_fetch = []    # host batches flushed at the start of every fetch()

    def __len__(self) -> int:
        return len(self._waiting)

    def read(self, xp, figures, then) -> None:
        """Call `then(list of floats)` with the values of `figures` (0-d or flat arrays of
        namespace `xp`), in order: now for NumPy, at the next `fetch()` for a
        device."""
        if xp is np:
            values = []
            for figure in figures:
                # (np.ndim's test without its two Python calls, for NumPy's own values)
                ndim = figure.ndim if isinstance(figure, _NUMPY_VALUES) else np.ndim(figure)
                if ndim == 0:  # the usual figure: one number
                    values.append(float(figure))
                else:
                    values.extend(np.asarray(figure, dtype=np.float64).reshape(-1).tolist())
            then(values)
            return
        self._waiting.append((xp, figures, then))
        if len(self._waiting) >= self.limit:
            self.fetch()

    def zeroed(self, xp, count: int):
        """`count` zeroed float64 slots of namespace `xp` for a kernel to add figures into,
        then `read`: slices of one buffer filled once per fetch, not one fill per call."""
        buffer, used = self._scratch.get(id(xp), (None, 0))
        if buffer is None or used + count > buffer.size:
            buffer, used = xp.zeros(max(count, _SCRATCH), xp.float64), 0
        self._scratch[id(xp)] = (buffer, used + count)
        slot = buffer[used:used + count]
        self._slots[id(slot)] = (slot, buffer, used)  # (the slot kept: its id stays its own)
        return slot

    def on_fetch(self, flush) -> None:
        """Call `flush()` at the start of every `fetch()` from now on."""
        self._on_fetch.append(flush)

    def fetch(self) -> None:
        """Finish the host batches, then bring every waiting figure to the host (one transfer
        per namespace) and pass each group on, in the order read."""
        for flush in self._on_fetch:
            flush()
        waiting, self._waiting = self._waiting, []
        slots, self._slots = self._slots, {}
        self._scratch.clear()  # slots read from now on come from a fresh buffer
        if not waiting:
            return
        values = {}
        for xp in {id(entry[0]): entry[0] for entry in waiting}.values():
            figures = [figure for entry in waiting if entry[0] is xp for figure in entry[1]]
            values[id(xp)] = iter(_transferred(xp, figures, slots))
            self.transfers += 1
        for xp, figures, then in waiting:
            taken = values[id(xp)]
            then([next(taken) for figure in figures for _ in range(figure.size)])


def _slot_of(figure, slots: dict):
    """(buffer, start) of a figure that is a slot `Readings.zeroed` handed out; else None."""
    slot = slots.get(id(figure))
    return slot[1:] if slot is not None and slot[0] is figure else None


def _transferred(xp, figures: list, slots: dict) -> list:
    """The values of `figures` (device arrays of namespace `xp`), in order, as floats, from
    one transfer. The zeroed buffers that slots were cut from cross whole, as far as they
    were used, and the other figures laid end to end after them: most figures of a step are
    such slots, so the transfer is one copy, or one concatenation of a few pieces, instead of
    a concatenation of every figure (a host call per figure, and one kernel argument each).
    """
    ends = {}  # id(buffer) -> [buffer, end of the slots read from it]
    others = []
    for figure in figures:
        slot = _slot_of(figure, slots)
        if slot is None:
            others.append(xp.asarray(figure, dtype=xp.float64).reshape(-1))
            continue
        buffer, start = slot
        used = ends.setdefault(id(buffer), [buffer, 0])
        used[1] = max(used[1], start + figure.size)
    offsets, pieces, at = {}, [], 0
    for key, (buffer, end) in ends.items():
        offsets[key] = at
        pieces.append(buffer[:end])
        at += end
    pieces += others
    if not pieces:
        return []
    flat = (xp.concatenate(pieces) if len(pieces) > 1 else pieces[0]).tolist()
    values, rest = [], at
    for figure in figures:
        slot = _slot_of(figure, slots)
        size = figure.size
        if slot is None:
            values += flat[rest:rest + size]
            rest += size
        else:
            begin = offsets[id(slot[0])] + slot[1]
            values += flat[begin:begin + size]
    return values
