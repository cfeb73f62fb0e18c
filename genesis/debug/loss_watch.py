"""`LossWatch`: the loss of every step, as `genesis trace` keeps it for `genesis diff`.

Told by `Tensor.backward` which tensor a backward call starts from, it keeps that value
when the tensor is a one-element floating tensor (a loss), keyed by the step it starts
(the number of backward calls finished before it). A loss a GradScaler scaled up is
kept unscaled (`scale_of(tensor)` says by how much it was scaled). A GPU value waits in the session's
`Readings` and crosses with the step's other figures. The first `limit` steps are kept
(for `genesis diff`); a `series` (a bounded `StepSeries`, for the pictures) is told them all.

>>> import genesis
>>> from genesis.debug.readings import Readings
>>> steps = iter(range(10))
>>> watch = LossWatch(Readings(), step=lambda: next(steps))
>>> watch.start()
>>> w = genesis.tensor([1.0, 2.0], requires_grad=True)
>>> for _ in range(2):
...     (w * w).sum().backward()
>>> watch.stop()
>>> watch.to_dict()
{'steps': [0, 1], 'values': [5.0, 5.0]}
"""
from __future__ import annotations

from ..autograd import engine
from ..autograd.tensor_methods import backward_roots
from ..grad_state import grad_state
from .readings import Readings

__all__ = ["LossWatch", "LIMIT"]

LIMIT = 20_000  # steps whose loss is kept (about 400 KB of trace.json)


class LossWatch:
    """Keeps {step: loss}; `step()` says which step a backward call starting now is."""

    def __init__(self, readings: Readings, step, limit: int = LIMIT, series=None,
                 scale_of=lambda tensor: 1.0):
        self.readings, self.step, self.limit = readings, step, limit
        self.scale_of = scale_of  # tensor -> the GradScaler scale it carries (1: none)
        self.losses: dict = {}
        self.series = series   # a StepSeries told every step's loss, however many (the pictures)
        self._last_step = -1

    def start(self) -> None:
        backward_roots.add(self)

    def stop(self) -> None:
        backward_roots.discard(self)

    def backward_root(self, tensor) -> None:
        """Tensor.backward listener: keep `tensor`'s value if it is a loss of a new step."""
        if grad_state.in_backward or engine.unwatched.depth or tensor.numel() != 1 \
                or not tensor.dtype.is_floating_point:
            return  # inside another backward (a checkpoint's), gradcheck's, or not a loss
        step = self.step()
        if step <= self._last_step:
            return
        self._last_step = step
        if step < self.limit:
            self.losses[step] = None  # known once read (a GPU value at the next fetch)
        elif self.series is None:
            return
        scale = self.scale_of(tensor)
        self.readings.read(tensor._device.xp, [tensor._data.reshape(1)],
                           lambda values, step=step: self._read(step, values[0] / scale))

    def _read(self, step: int, value: float) -> None:
        if step < self.limit:
            self.losses[step] = value
        if self.series is not None:
            self.series.add(step, value)

    def to_dict(self) -> dict:
        """{"steps": [...], "values": [...]} in step order (what trace.json's meta holds)."""
        steps = sorted(step for step, value in self.losses.items() if value is not None)
        return {"steps": steps, "values": [self.losses[step] for step in steps]}
