"""`ParameterBirths`: where and when each Parameter of a traced run was made, so that a layer
made after its optimizer (a head replaced, weights loaded with `assign=True`) is found at
the line that made it.

Each Parameter made while it listens is put down with the user's line that made it (the
innermost frame outside genesis and outside a constructor: `model.fc = nn.Linear(...)`,
`model.fc1 = LoRALinear(model.fc1)`, `load_state_dict(..., assign=True)`) and its place in the run's order of events (`now()`, which an optimizer's
construction reads too). An entry goes when its parameter does.

>>> import genesis
>>> births = ParameterBirths()
>>> births.start()
>>> before = now()
>>> weight = genesis.nn.Parameter(genesis.zeros(2))
>>> births.stop()
>>> site, order = births.of(weight)
>>> order > before, site.line > 0
(True, True)
"""
from __future__ import annotations

import itertools
import weakref

from ..autograd.source import SourceLocation
from ..nn.parameter import made_listeners

__all__ = ["ParameterBirths", "now"]

now = itertools.count().__next__  # the run's order of events: each call a later number


class ParameterBirths:
    """{id(parameter): (weakref, the SourceLocation that made it, its order)}."""

    def __init__(self):
        self._births: dict = {}
        self._listener = self._made

    def start(self) -> None:
        made_listeners.add(self._listener)

    def stop(self) -> None:
        made_listeners.discard(self._listener)

    def of(self, parameter) -> tuple:
        """(SourceLocation or None, order) of `parameter`'s making; (None, None) if it was
        made while nobody listened."""
        entry = self._births.get(id(parameter))
        if entry is None or entry[0]() is not parameter:
            return None, None
        return entry[1], entry[2]

    def _made(self, parameter) -> None:
        key = id(parameter)
        births = self._births
        reference = weakref.ref(parameter, lambda _, key=key: births.pop(key, None))
        self._births[key] = (reference, _making_line(SourceLocation.capture(max_frames=6)), now())


def _making_line(location: SourceLocation | None) -> SourceLocation | None:
    """The line that made the module a parameter belongs to: the innermost user frame outside
    an `__init__` (`model.fc1 = LoRALinear(...)`, not `self.lora_b = nn.Parameter(...)` in
    LoRALinear's constructor), with the frame around it; the innermost one if all are."""
    if location is None:
        return None
    frames = location.frames
    start = next((index for index, frame in enumerate(frames) if frame.function != "__init__"), 0)
    return location if start == 0 else SourceLocation(frames[start:start + 2])
