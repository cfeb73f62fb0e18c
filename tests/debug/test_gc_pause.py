"""The collector's pause around a recorded step: a pause that leaves many new container
objects ends in one full collection, not three walks over them; a short one in none."""
import gc
import weakref

import pytest

from genesis.debug.gc_pause import SWEEP_AT_LEAST, GCPause


class _Cycle:
    def __init__(self):
        self.me = self


@pytest.fixture
def collections():
    """The generations collected, in order, while the test runs (the collector on)."""
    seen = []

    def note(phase, info):
        if phase == "stop":
            seen.append(info["generation"])
    was_enabled = gc.isenabled()
    gc.enable()
    gc.collect()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        (gc.enable if was_enabled else gc.disable)()


def test_a_pause_that_made_many_objects_ends_in_one_full_collection(collections):
    pause = GCPause()
    pause.pause()
    young = max(SWEEP_AT_LEAST, len(gc.get_objects(2)) // 4) + 1000
    kept = [[] for _ in range(young)]  # a recorded graph: alive after the pause
    garbage = weakref.ref(_Cycle())   # cyclic garbage made during the pause
    assert collections == [] and garbage() is not None
    pause.resume()
    assert collections == [2]
    assert garbage() is None  # found by that collection
    assert len(kept) == young


def test_a_short_pause_collects_nothing_at_its_end(collections):
    pause = GCPause()
    pause.pause()
    kept = [[] for _ in range(100)]
    pause.resume()
    assert collections == [] and gc.isenabled()
    assert len(kept) == 100


def test_nested_pauses_collect_once_at_the_outermost_end(collections):
    pause = GCPause()
    pause.pause()
    pause.pause()
    kept = [[] for _ in range(max(SWEEP_AT_LEAST, len(gc.get_objects(2)) // 4) + 1000)]
    pause.resume()
    assert collections == [] and not gc.isenabled()
    pause.resume()
    assert collections == [2] and gc.isenabled()
    assert kept


def test_a_pause_with_the_collector_off_leaves_it_off(collections):
    gc.disable()
    pause = GCPause()
    pause.pause()
    kept = [[] for _ in range(SWEEP_AT_LEAST + 1000)]
    pause.resume()
    assert collections == [] and not gc.isenabled()
    assert kept
