"""`NormHistory`: one parameter's gradient norm (and weight norm) per backward call, in
bounded memory: the last `recent` steps in full, older steps folded into summary bins
of at least `recent / 8` steps whose widths double with age (at most two bins of each
width), so a run of 1,000,000 steps keeps 512 readings and under 30 bins.

A step where the parameter got no gradient is kept as None.

>>> history = NormHistory(start=0, recent=16)
>>> for step in range(30):
...     history.add(step, float(step), 1.0)
>>> history.steps()[0], history.grad_norms()[-1]
(14, 29.0)
>>> [(b.first_step, b.last_step, b.mean) for b in history.bins()]
[(0, 7, 3.5), (8, 11, 9.5), (12, 13, 12.5)]
"""
from __future__ import annotations

import math
from array import array

__all__ = ["NormHistory", "Bin", "SummaryBins", "RECENT", "ratio"]

RECENT = 512
_NONE = -1.0  # a step without gradient (norms are never negative; NaN is a real reading)


class Bin:
    """A summary of consecutive older steps: their range, how many had a gradient
    (`readings`), how many of those were NaN/Inf (`non_finite`), and the min, max and mean
    of the finite norms and the last norm (None where there were none)."""

    __slots__ = ("first_step", "last_step", "width", "readings", "non_finite", "min", "max",
                 "total", "last", "finite")

    def __init__(self, step: int, norm: float | None):
        self.first_step, self.last_step = step, step - 1
        self.width = self.readings = self.non_finite = self.finite = 0
        self.min = self.max = self.last = None
        self.total = 0.0
        self.add(step, norm)

    def add(self, step: int, norm: float | None) -> None:
        """Extend this bin with the next step's reading."""
        self.last_step = step
        self.width += 1
        if norm is None:
            return
        self.readings += 1
        self.last = norm
        if norm - norm != 0.0:  # NaN or infinite
            self.non_finite += 1
            return
        self.finite += 1
        self.total += norm
        if self.min is None or norm < self.min:
            self.min = norm
        if self.max is None or norm > self.max:
            self.max = norm

    @property
    def mean(self) -> float | None:
        return self.total / self.finite if self.finite else None

    def absorb(self, newer: "Bin") -> None:
        """Extend this bin with the next bin in time."""
        self.last_step = newer.last_step
        self.width += newer.width
        self.readings += newer.readings
        self.non_finite += newer.non_finite
        if newer.finite:
            if self.min is None or newer.min < self.min:
                self.min = newer.min
            if self.max is None or newer.max > self.max:
                self.max = newer.max
            self.total += newer.total
            self.finite += newer.finite
        if newer.last is not None:
            self.last = newer.last

    def to_dict(self) -> dict:
        return {"first_step": self.first_step, "last_step": self.last_step,
                "readings": self.readings, "non_finite": self.non_finite, "min": self.min,
                "max": self.max, "mean": self.mean, "last": self.last}


class SummaryBins:
    """Older readings folded into `Bin`s of at least `narrowest` readings, whose widths
    double with age (three bins of one width: the two older merge), at most two of each
    width: a run of any length in a few dozen bins."""

    __slots__ = ("narrowest", "closed", "filling")

    def __init__(self, narrowest: int):
        self.narrowest = max(1, narrowest)
        self.closed = []       # oldest first
        self.filling = None    # the newest bin, still taking readings

    def fold(self, step: int, value: float | None) -> None:
        """Add the next older reading."""
        filling = self.filling
        if filling is None:
            filling = self.filling = Bin(step, value)
        else:
            filling.add(step, value)
        if filling.width < self.narrowest:
            return
        bins = self.closed
        bins.append(filling)
        self.filling = None
        index = len(bins) - 1
        while index >= 2:
            older = bins[index - 2]
            if not older.width == bins[index - 1].width == bins[index].width:
                break
            older.absorb(bins[index - 1])
            del bins[index - 1]
            index -= 2

    def all(self) -> list:
        """Every bin, oldest first."""
        return self.closed + ([self.filling] if self.filling is not None else [])


class NormHistory:
    """Readings from step `start` on: the last `recent` in two ring buffers (gradient norm,
    weight norm), older ones summarised in `bins()` (oldest first). Steps must be added in
    order, one per backward call."""

    __slots__ = ("start", "recent", "next_step", "_grads", "_weights", "_bins",
                 "early", "reached", "largest", "non_finite", "overflowed")

    EARLY = 3  # first non-zero finite readings kept for good: the baseline of the growth rules

    def __init__(self, start: int, recent: int = RECENT):
        self.start = self.next_step = start
        self.recent = recent
        self._grads = array("d", [_NONE]) * recent
        self._weights = array("d", [_NONE]) * recent
        self._bins = SummaryBins(recent // 8)  # the steps that left the window (64 and up)
        self.early = []         # [(step, grad norm, weight norm)] first non-zero finite readings
        self.reached = 0        # steps in which a backward reached it (with or without .grad)
        self.largest = None     # the largest finite norm read
        self.non_finite = 0     # readings that were NaN or infinite
        self.overflowed = 0     # NaN/Inf norms under a GradScaler's scale: no reading

    def add(self, step: int, grad: float | None, weight: float | None) -> None:
        """Append step `step` (the next one): None where it got no gradient."""
        if step != self.next_step:
            raise ValueError(f"step {step} added after step {self.next_step - 1}; steps come in order")
        slot = step % self.recent
        if step - self.recent >= self.start:  # the reading leaving the window joins the bins
            old = self._grads[slot]
            self._bins.fold(step - self.recent, None if old == _NONE else old)
        self._grads[slot] = _NONE
        self._weights[slot] = _NONE
        self.next_step = step + 1
        if grad is not None:
            self.set(step, grad, weight)

    def set(self, step: int, grad: float, weight: float | None,
            overflow_expected: bool = False) -> None:
        """Fill in the norms of a step already added (those of a GPU arrive later). With
        `overflow_expected` (the loss was scaled up), a NaN/Inf gradient norm is the scale's
        overflow, which the scaler skips: counted in `overflowed`, the step left without a
        reading."""
        if overflow_expected and not math.isfinite(grad):
            self.overflowed += 1
            return
        slot = step % self.recent
        self._grads[slot] = grad
        self._weights[slot] = _NONE if weight is None else weight
        if not math.isfinite(grad):
            self.non_finite += 1
            return
        if self.largest is None or grad > self.largest:
            self.largest = grad
        if len(self.early) < self.EARLY and grad > 0:
            self.early.append((step, grad, weight))

    # -- reading it back -------------------------------------------------------------
    def bins(self) -> list:
        """Summary bins of the steps before the recent window, oldest first."""
        return self._bins.all()

    def steps(self) -> list:
        """The steps of the recent window, oldest first."""
        return list(range(max(self.start, self.next_step - self.recent), self.next_step))

    def grad_norms(self) -> list:
        """The gradient norm of each step of `steps()` (None where it had none)."""
        return [self._read(self._grads, step) for step in self.steps()]

    def readings(self, count: int | None = None) -> list:
        """[(step, grad norm, weight norm or None)] of the recent steps that had a gradient,
        oldest first; only the last `count` of them when given."""
        found = []
        for step in range(self.next_step - 1, max(self.start, self.next_step - self.recent) - 1, -1):
            grad = self._read(self._grads, step)
            if grad is not None:
                found.append((step, grad, self._read(self._weights, step)))
                if count is not None and len(found) == count:
                    break
        found.reverse()
        return found

    def at(self, step: int) -> float | None:
        """The gradient norm at a recent step, or None (no gradient then, or not recent)."""
        if not max(self.start, self.next_step - self.recent) <= step < self.next_step:
            return None
        return self._read(self._grads, step)

    def ratio_at(self, step: int) -> float | None:
        """grad norm / weight norm at a recent step (inf for an all-zero weight), or None."""
        if not max(self.start, self.next_step - self.recent) <= step < self.next_step:
            return None
        return ratio(self._read(self._grads, step), self._read(self._weights, step))

    def last(self) -> tuple:
        """(step, norm) of the latest reading, recent or binned; (None, None) if none."""
        for step, grad, _ in self.readings(1):
            return step, grad
        for summary in reversed(self.bins()):
            if summary.last is not None:
                return summary.last_step, summary.last
        return None, None

    def _read(self, buffer, step: int):
        value = buffer[step % self.recent]
        return None if value == _NONE else value


def ratio(grad, weight):
    """grad norm / weight norm (inf for a gradient on an all-zero weight), None if unknown."""
    if grad is None or weight is None:
        return None
    if weight == 0.0:
        return math.inf if grad > 0 else 0.0
    return grad / weight
