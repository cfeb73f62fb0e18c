"""The cyclic garbage collector waits while genesis records a step, from the first op of
its forward to the end of its backward call (the graph it keeps grows all that time), and
is exactly as the script left it afterwards, whatever happened."""
from __future__ import annotations

import gc

import pytest

import genesis
from genesis.debug import record


def seen_in_backward(x):
    """A hook that notes whether the collector is on while backward runs through `x`."""
    seen = []

    def hook(grad):
        seen.append(gc.isenabled())

    x.register_hook(hook)
    return seen


def test_a_recorded_backward_runs_without_cycle_collection_then_turns_it_back_on():
    w = genesis.randn(3, requires_grad=True)
    with record():
        y = w * 2
        seen = seen_in_backward(y)
        y.sum().backward()
        assert seen == [False] and gc.isenabled()
    z = w * 3
    seen = seen_in_backward(z)
    z.sum().backward()
    assert seen == [True]  # nothing is paused when nothing records


def test_a_backward_that_raises_turns_the_collector_back_on():
    w = genesis.randn(3, requires_grad=True)

    def broken(grad):
        raise RuntimeError("hook failed")

    with record():
        y = w * 2
        y.register_hook(broken)
        with pytest.raises(RuntimeError, match="hook failed"):
            y.sum().backward()
    assert gc.isenabled()


def test_a_script_that_turned_the_collector_off_keeps_it_off():
    w = genesis.randn(3, requires_grad=True)
    gc.disable()
    try:
        with record():
            (w * 2).sum().backward()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_recorded_forward_pauses_the_collector_until_its_backward_ends():
    w = genesis.randn(3, requires_grad=True)
    with record():
        assert gc.isenabled()                    # nothing recorded yet
        with genesis.no_grad():
            w * 2                                # no graph: nothing to keep
        assert gc.isenabled()
        y = (w * 2).exp()
        assert not gc.isenabled()                # the step's graph is growing
        y.sum().backward()
        assert gc.isenabled()                    # filed: the collector is back
        w * 3                                    # a forward no backward call follows
        assert not gc.isenabled()
    assert gc.isenabled()                        # the recorder's end turns it back on


def test_forwards_on_several_threads_each_hold_their_pause():
    import threading
    w = genesis.randn(3, requires_grad=True)
    ready, done = threading.Event(), threading.Event()

    def other():
        y = w * 2
        ready.set()
        done.wait(5)
        y.sum().backward()

    with record():
        thread = threading.Thread(target=other)
        thread.start()
        ready.wait(5)
        (w * 4).sum().backward()                 # this thread's step ends: the other's goes on
        assert not gc.isenabled()
        done.set()
        thread.join()
        assert gc.isenabled()
