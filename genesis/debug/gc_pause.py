"""`paused_gc`: no cyclic garbage collection while genesis builds or copies a big acyclic
structure (a captured graph, its JSON form, a drawing's items); `backward_pause`: none
during a recorded backward call, which builds the graph genesis files for it.

Each full collection walks every container object alive; a graph of 100,000 ops
adds a dozen per op, and building it triggers full collections again and again as
the object count grows, several seconds in all. Reference counting still frees
everything at once; only the search for cycles waits until the block ends.

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["paused_gc", "GCPause", "backward_pause"]


@contextmanager
def paused_gc():
    """Suspend the cyclic garbage collector for the block (nested blocks are fine: the
    outermost one turns it back on, if it was on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class GCPause:
    """The collector paused from a `pause()` to its `resume()`, which may be called from other
    places (a backward call's start and end). Pauses overlap (backward calls on several
    threads): the collector is turned back on when the last one ends, if it was on before
    the first.

    >>> pause = GCPause()
    >>> pause.pause(); pause.pause(); pause.resume()
    >>> gc.isenabled()
    False
    >>> pause.resume(); gc.isenabled()
    True
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._pauses = 0
        self._was_enabled = False

    def pause(self) -> None:
        with self._lock:
            if self._pauses == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._pauses += 1

    def resume(self) -> None:
        with self._lock:
            self._pauses -= 1
            resumed = self._pauses == 0 and self._was_enabled
            if resumed:
                gc.enable()
        if resumed:
            sweep_if_due()


def sweep_if_due() -> None:
    """After a pause that left many new container objects (a recorded graph of thousands of
    ops), one full collection now. Left to itself, the collector would walk those objects
    three times: as the youngest generation, again as the middle one, and a third time in
    the full collection that follows once they have grown the oldest by a quarter. Not done
    when they are under a quarter of the oldest generation: no full collection was due."""
    young = gc.get_count()[0]
    if young >= SWEEP_AT_LEAST and young * 4 >= len(gc.get_objects(2)):
        gc.collect()


SWEEP_AT_LEAST = 100_000  # new container objects (a graph of about 8,000 recorded ops)
backward_pause = GCPause()  # shared by every recorder: pauses count across them
