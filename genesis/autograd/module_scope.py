"""A cheap hook point for "which module is running".

`genesis.nn.Module.__call__` calls `enter(module)` / `exit(module)` around
`forward`, but only while `listeners` is non-empty, so a model pays nothing
unless a tool (graph recording) is listening. A listener is any object with
`enter(module)` and `exit(module)` methods.
"""
from __future__ import annotations

listeners: list = []


def enter(module) -> None:
    for listener in listeners:
        listener.enter(module)


def exit(module) -> None:
    for listener in reversed(listeners):
        listener.exit(module)
