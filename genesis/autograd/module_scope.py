"""Which module is running: always known per thread, and a hook point for tools.

`genesis.nn.Module.__call__` makes a module call the thread's `running.call` for as
long as its `forward` runs, so every op that joins a graph remembers the call it ran
in (`Node._module_call`) and a graph captured later, inside `genesis.debug.record` or
not, can name the module of every op (`genesis.debug.module_paths`). A module call is
the plain tuple `(module, outer call or None, order)`, where `order` (from
`call_order()`) increases with each call started on any thread: a tuple because one
is made per module call, and a tuple costs a third of a slotted object. Knowing the
module costs one tuple and a thread-local swap per module call, and one attribute
read per op.

>>> import genesis
>>> from genesis import nn
>>> class Double(nn.Module):
...     def forward(self, x):
...         return x * 2
>>> y = Double()(genesis.ones(1, requires_grad=True))
>>> module, outer, order = y.grad_fn._module_call
>>> type(module).__name__, outer, running.call
('Double', None, None)

Tools that must see every call as it happens (graph recording) add a
`ModuleCallListener` to `listeners`; `Module.__call__` calls `enter(module)` /
`exit(module)` around `forward` only while one listens. Tools that must know of the
modules built while a forward runs (a layer made anew at each call) add a
`ModuleBuildListener` to `build_listeners`; `Module.__init__` calls `built(module)`,
as its construction starts, when a module call is in progress and one listens.
"""
from __future__ import annotations

import itertools
import threading
from typing import Protocol

from ..listeners import Listeners

__all__ = ["running", "call_order", "listeners", "enter", "exit", "ModuleCallListener",
           "build_listeners", "built", "ModuleBuildListener"]


class ModuleCallListener(Protocol):
    """Told as each module's forward starts and ends."""

    def enter(self, module) -> None:
        ...

    def exit(self, module) -> None:
        ...


class ModuleBuildListener(Protocol):
    """Told as a module's construction starts inside another module's forward (its
    parameters are not made yet)."""

    def built(self, module) -> None:
        ...


listeners: Listeners[ModuleCallListener] = Listeners()
build_listeners: Listeners[ModuleBuildListener] = Listeners()

call_order = itertools.count().__next__  # the `order` of the next module call


class _Running(threading.local):
    call = None  # this thread's innermost module call in progress, or None outside any module


running = _Running()


def enter(module) -> None:
    for listener in listeners:
        listener.enter(module)


def exit(module) -> None:
    for listener in reversed(listeners):
        listener.exit(module)


def built(module) -> None:
    for listener in build_listeners:
        listener.built(module)
