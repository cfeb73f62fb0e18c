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
`exit(module)` around `forward` only while one listens. A forward that runs a recurrence
(`genesis.nn.RNN`, `LSTM`, `GRU`) says which time step of which of its units it runs with
`time_step(unit, index)` (one tuple and a thread-local write a step), so a tool can file
each op by its role in a step (the LSTM's output tanh) rather than by its order in the
call (its 50th tanh). Tools that must know of the
modules built while a forward runs (a layer made anew at each call) add a
`ModuleBuildListener` to `build_listeners`; `Module.__init__` calls `built(module)`,
as its construction starts, when a module call is in progress and one listens. Tools
that must know when a model is switched between training and evaluation add a
`ModeListener` to `mode_listeners`; `Module.train()` (and so `eval()`) calls
`mode_set(module, mode)` once its whole tree is set, for a call the script made (not for
the calls on its descendants that it makes, nor for those an overridden `train()` of a
descendant makes meanwhile), when one listens; `Module.__setattr__` calls
`mode_assigned(module, mode)` when the script sets `module.training` by hand (outside
`train()`), when one listens.
"""
from __future__ import annotations

import itertools
import threading
from typing import Protocol

from ..listeners import Listeners

__all__ = ["running", "call_order", "listeners", "enter", "exit", "ModuleCallListener",
           "build_listeners", "built", "ModuleBuildListener", "time_step", "mode_listeners",
           "mode_set", "mode_assigned", "ModeListener"]


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


class ModeListener(Protocol):
    """Told when `train(mode)` or `eval()` has set the mode of `module` and its descendants."""

    def mode_set(self, module, mode: bool) -> None:
        ...

    def mode_assigned(self, module, mode) -> None:
        """The script assigned `module.training = mode` itself (its descendants unchanged)."""


listeners: Listeners[ModuleCallListener] = Listeners()
build_listeners: Listeners[ModuleBuildListener] = Listeners()
mode_listeners: Listeners[ModeListener] = Listeners()

call_order = itertools.count().__next__  # the `order` of the next module call


class _Running(threading.local):
    call = None  # this thread's innermost module call in progress, or None outside any module
    # (order of the call, unit, index): the time step that call's forward declared it runs
    # (`time_step`); it holds only while `order` is that of the innermost call in progress
    step = None
    setting_modes = 0  # `train()` calls in progress on this thread (a tree is set recursively)


running = _Running()


def time_step(unit: str | None, index: int = 0) -> None:
    """Declare, from a module's forward, that its ops from now on run time step `index` of
    its recurrent unit `unit` (a name: "" for its only one, "l1_reverse" for layer 1's
    reverse direction), until the next declaration; `unit` None: no time step any more.

    >>> time_step("", 0)                     # outside a module call: nothing is declared
    >>> running.step is None
    True
    """
    call = running.call
    running.step = None if call is None or unit is None else (call[2], unit, index)


def enter(module) -> None:
    for listener in listeners:
        listener.enter(module)


def exit(module) -> None:
    for listener in reversed(listeners):
        listener.exit(module)


def built(module) -> None:
    for listener in build_listeners:
        listener.built(module)


def mode_set(module, mode: bool) -> None:
    for listener in mode_listeners:
        listener.mode_set(module, mode)


def mode_assigned(module, mode) -> None:
    for listener in mode_listeners:
        listener.mode_assigned(module, mode)
