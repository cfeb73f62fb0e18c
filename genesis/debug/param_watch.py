"""`ParamWatch`: per-parameter gradient norms after every backward call, and what they
reveal: parameters that receive no gradient, all-zero, exploding and vanishing gradients.

Each tracked leaf keeps a `NormHistory` (its last 512 steps in full, older ones in
summary bins whose widths double with age: flat memory however long the run) of its
gradient norm and its weight norm after each backward call that reached it.

The status of each parameter, and the rules that decide it, are in
`genesis.debug.param_status`; the findings and their wording in `genesis.debug.param_findings`.

>>> import genesis
>>> w = genesis.tensor([3.0, 4.0], requires_grad=True)
>>> watch = ParamWatch()
>>> _ = watch.track("w", w)
>>> (w * 2).sum().backward()
>>> watch.measure()
>>> row, = watch.rows()
>>> row.grad_norm, row.status, row.steps
(2.8284271247461903, 'ok', [0])
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import AccumulateGrad
from ._census import SQUARE_SUMS
from ._finite_figures import dot_with_itself
from .norm_history import RECENT, NormHistory
from .param_findings import parameter_findings
from .param_status import parameter_statuses, unknown_loss
from .readings import Readings
from .trace import ParameterRow
from .tracked_leaf import Tracked

__all__ = ["ParamWatch"]


class ParamWatch:
    """Tracks leaves (`track`) and, at each `measure()` (one per backward call), records the
    gradient norm of each leaf the call reached; gradients on a GPU are summed in one launch
    and filled in when `readings` fetches."""

    def __init__(self, readings: Readings | None = None, recent: int = RECENT):
        self.readings = readings if readings is not None else Readings()
        self.recent = recent
        self.tracked = {}   # id(tensor) -> Tracked, in the order first seen
        self.loss_at = unknown_loss  # step -> its loss, where known (the session tells it)
        self._names = {}    # name -> Tracked
        self.steps = 0

    def track(self, name: str, tensor, rank: int = 1, role: str | None = None) -> Tracked | None:
        """Track `tensor` under `name` (made unique with "#2", "#3"), or give a tracked one a
        better name (higher `rank`) or another role. Tensors that do not require grad are
        not tracked (frozen)."""
        entry = self.tracked.get(id(tensor))
        if entry is None:
            if not tensor.requires_grad:
                return None
            entry = Tracked(self._unique(name), tensor, NormHistory(self.steps, self.recent), rank)
            self.tracked[id(tensor)] = entry
            self._names[entry.name] = entry
        elif rank > entry.rank and name != entry.name:
            del self._names[entry.name]
            entry.name, entry.rank = self._unique(name), rank
            self._names[entry.name] = entry
        if role is not None:
            entry.roles.add(role)
        return entry

    def put_in_order(self, order: dict) -> None:
        """Order the tracked leaves by `order` (id(tensor) -> rank: the models' order), those
        it does not rank after the others, as they were. The parameter table and the
        findings that list parameters follow it, not the order they were first seen in
        (an optimizer's groups, then a backward call's, which runs from the last layer)."""
        ranked = sorted(self.tracked.items(), key=lambda item: order.get(item[0], len(order)))
        self.tracked = dict(ranked)

    def grad_norm_at(self, tensor, step: int) -> float | None:
        """The norm of `tensor`'s gradient as backward call `step` left it, while that step is
        recent (None: not tracked, no gradient then, or too long ago)."""
        entry = self.tracked.get(id(tensor))
        return entry.history.at(step) if entry is not None and entry.tensor is tensor else None

    def name_of(self, tensor) -> str | None:
        """The name of `tensor` if it is a tracked parameter (a module's, or given to an
        optimizer), else None."""
        entry = self.tracked.get(id(tensor))
        return entry.name if entry is not None and entry.tensor is tensor and entry.is_parameter \
            else None

    def _unique(self, name: str) -> str:
        candidate, number = name, 1
        while candidate in self._names:
            number += 1
            candidate = f"{name}#{number}"
        return candidate

    def untracked(self, reached) -> list:
        """The leaves a backward call sent gradient to (`reached`: its autograd nodes) that
        are not tracked, in the order reached."""
        found = []
        for node in reached:
            if node.__class__ is AccumulateGrad:
                tensor = node.variable
                if tensor is not None:
                    entry = self.tracked.get(id(tensor))
                    if entry is None or entry.tensor is not tensor:
                        found.append(tensor)
        return found

    def measure(self, reached=None, scale: float = 1.0) -> None:
        """Record one step: the norms of the gradients (and weights) of the leaves this
        backward call reached. `reached` holds the autograd nodes the call sent gradient to
        (the engine's `flowed_from`); None counts every leaf with a `.grad` as reached.
        `scale`: the GradScaler scale of the loss backward started from; the norms are
        divided by it, and a NaN/Inf norm under a scale above 1 is an overflow the scaler
        skips (counted in `overflowed`, not a reading)."""
        step = self.steps
        by_device = {}
        for entry in self.tracked.values():
            tensor, history = entry.tensor, entry.history
            history.add(step, None, None)
            grad = tensor._grad
            if reached is None:
                if grad is None:
                    continue
            elif tensor._accumulator is None or tensor._accumulator not in reached:
                continue
            history.reached += 1
            if grad is not None:  # None: reached through autograd.grad, which fills no .grad
                by_device.setdefault(grad._device, []).append((history, grad._data, tensor._data))
        for device, entries in by_device.items():
            if device.xp is np:  # on the host: summed now (nothing to gain from batching)
                for history, grad, weight in entries:
                    history.set(step, math.sqrt(dot_with_itself(np, grad)) / scale,
                                math.sqrt(dot_with_itself(np, weight)), overflow_expected=scale > 1)
                continue

            def record(squares: list, entries=entries) -> None:
                count = len(entries)
                for (history, _, _), grad_total, weight_total in zip(entries, squares, squares[count:]):
                    history.set(step, math.sqrt(grad_total) / scale, math.sqrt(weight_total),
                                overflow_expected=scale > 1)
            xp = device.xp
            arrays = [grad for _, grad, _ in entries] + [weight for _, _, weight in entries]
            self.readings.read(xp, SQUARE_SUMS(device, arrays,
                                               lambda count: self.readings.zeroed(xp, count)),
                               record)
        self.steps += 1

    # -- what the histories say --------------------------------------------------
    def statuses(self) -> dict:
        """Tracked -> its status: "ok", "no gradient", "not trained", "zero gradient", "no
        effect on the loss", "exploding", "vanishing", "nan", "not measured", "never trains"
        or "gradient set by hand" (see `genesis.debug.param_status`)."""
        return parameter_statuses(self.tracked.values(), self._names, self.steps, self.loss_at)

    def rows(self) -> list:
        """The parameter table: one ParameterRow per tracked leaf."""
        rows = []
        for entry, status in self.statuses().items():
            history, tensor = entry.history, entry.tensor
            step, last = history.last()
            rows.append(ParameterRow(entry.name, tuple(tensor.shape), tensor.dtype.name, last, status,
                                     history.grad_norms(), steps=history.steps(),
                                     grad_norm_step=step,
                                     summary=[summary.to_dict() for summary in history.bins()]))
        return rows

    def findings(self, locate, explain=None) -> list:
        """One finding per problem (see `genesis.debug.param_findings`): `locate(entry)` gives
        (source, code, graph, node) to point at; `explain(tensor)` says why one got no
        gradient."""
        return parameter_findings(self, locate, explain)
