"""`paused_gc`: no cyclic garbage collection while genesis builds or copies a big acyclic
structure (a captured graph, its JSON form, a drawing's items).

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
from contextlib import contextmanager

__all__ = ["paused_gc"]


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
