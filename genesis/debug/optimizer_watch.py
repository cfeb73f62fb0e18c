"""`OptimizerWatch`: what the optimizers and schedulers of a run do, step by step, and the
training-loop bugs that shows as the steps happen.

It records each optimizer's parameter groups (and the line that built it), every
`step()` and every scheduler step, and at the steps `sampled` picks, how far each
parameter moved (|Δw|/|w|, from a copy of the parameters taken just before the update).
A "step" below is a backward call, numbered from 0, as everywhere in a trace.

The bugs it notes as the steps happen, each with its rule (the findings are built and
worded in `genesis.debug.optimizer_findings`, which judges not_updated, not_optimized and
update_ratio at the end, from what the watch measured):

- gradient_accumulation: a parameter entered `optimizer.step()` with a gradient that
  had been accumulating since before that optimizer's previous step: the very gradient
  tensor it stepped with then, never set to None, replaced or zeroed in between (no
  `zero_grad()`). Accumulating over several
  backward calls and then stepping and clearing (gradient accumulation on purpose) never
  carries a gradient across a step, and is not a finding. A `step()` that had gradients
  and changed no parameter (no version moved, no optimizer stepped inside it) is not a
  step here: a wrapper that skips the update while gradients accumulate, as Hugging Face
  Accelerate's does, is called every micro-batch. A write in place during the step counts
  as a change too: an optimizer that writes through `.data` (`p.data.add_(...)`, as many
  hand-written ones do) moves no version counter of its parameters.
- step_without_backward: `optimizer.step()` with no backward call since that optimizer's
  previous step, while its parameters hold the same gradient tensors as then, unchanged
  (the update is applied again with old gradients). Gradients written in place since (an
  estimate copied into `.grad`, as evolution strategies do) are new ones: no finding. (A
  write through `.data` is invisible to version counters, here as in PyTorch.)
- gradients_cleared: `optimizer.step()` after backward calls that gave some of its
  parameters gradients, when every one of those gradients has since been set to None or
  overwritten with zeros (`zero_grad()` between `loss.backward()` and `step()`, or clipping
  to 0): the step applies none of them. A gradient left as the backward wrote it, or
  replaced by a tensor with a nonzero value (an all-reduced copy), is applied: no finding.
  The finding names the call that cleared them (zero_grad(), clip_grad_value_ or
  clip_grad_norm_ to 0) where the gradients are as that call left them.
- scheduler_order: a learning-rate scheduler stepped before its optimizer's first step
  (the schedule's first value is skipped), unless a GradScaler skipped that optimizer's
  steps (its first steps often are, and that is harmless). Steps are counted as the
  optimizer counts them for PyTorch's warning about the same mistake, so an optimizer with
  a `step` of its own counts too.

>>> import genesis
>>> w = genesis.nn.Parameter(genesis.ones(3))
>>> optimizer = genesis.optim.SGD([w], lr=0.1)
>>> watch = OptimizerWatch(steps=lambda: calls[0], name_of=lambda tensor: "w")
>>> calls = [0]
>>> watch.start()
>>> for _ in range(3):
...     watch.backward_started()
...     (w * w).sum().backward(); calls[0] += 1
...     optimizer.step()
>>> watch.stop()
>>> [finding.kind for finding in watch.findings(params=None)]
['gradient_accumulation']
"""
from __future__ import annotations

import functools
import inspect
import math
import sys
import weakref
from collections import deque
from typing import Callable

from ..autograd.source import SourceLocation
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..nn import _grad_edits as grad_edits
from ..optim import optimizer as optimizers
from ..ops.inplace import write_listeners
from ..optim.lr_scheduler import base as schedulers
from .optimizer_findings import optimizer_findings, source_text
from .parameter_births import ParameterBirths, now
from .readings import Readings
from .sampling import sampled
from .step_series import StepSeries
from .watched_optimizer import WatchedOptimizer

__all__ = ["OptimizerWatch"]

NOTICEABLE = 1e-3      # a gradient norm this far below the weight norm may vanish in rounding
EVENTS_KEPT = 200      # first and last events kept for the pictures


class OptimizerWatch:
    """Install with `start()` (it joins the optimizer and scheduler hook points), call
    `backward_started()` as each backward call of the script starts. `steps()` says how
    many backward calls have finished; `name_of(tensor)` names a parameter. Figures of GPU
    tensors wait in `readings` (the session's: they cross with its other figures)."""

    def __init__(self, steps: Callable[[], int], name_of: Callable, readings: Readings | None = None):
        self.steps, self.name_of = steps, name_of
        self.readings = readings if readings is not None else Readings()
        self.watched = {}           # id(optimizer) -> WatchedOptimizer
        self.accumulating_since = {}  # id(param) -> backward call its current .grad began at
        self.grads_at_start = {}    # id(param) -> (grad, its version) as the backward call began
        self.update_ratios = {}     # parameter name -> StepSeries of |Δw|/|w|
        self.moved = {}             # parameter name -> [measured steps with a gradient, changed]
        self.measured_lr = {}       # parameter name -> its group's highest lr at its measured steps
        self.reached_ratios = {}    # the same on the rows the gradient reached (2+ dimensions)
        self.rows_left_out = {}     # parameter name -> measured steps where it did not reach all
        self.grown_from_zero = set()  # names of parameters measured while all zeros
        self.silent_steps = {}      # parameter name -> measured steps its gradient was all zeros
        self.stepped_with_grad = set()  # ids of parameters an optimizer stepped with a non-zero .grad
        self.scheduler_early = []   # (scheduler name, optimizer name, source, step)
        self.stepping_now = []      # the entries told `stepping` and not yet `stepped`
        self.writes_in_steps = 0    # in-place writes seen while an optimizer stepped
        self.births = ParameterBirths()  # where each parameter was made, and when
        self._count_write = self._saw_write
        self.events_first, self.events_last = [], deque(maxlen=EVENTS_KEPT)
        self.live_findings = 0      # findings known so far (for a live display)

    def start(self) -> None:
        optimizers.listeners.add(self)
        schedulers.listeners.add(self)
        grad_edits.listeners.add(self)
        self.births.start()

    def stop(self) -> None:
        optimizers.listeners.discard(self)
        schedulers.listeners.discard(self)
        grad_edits.listeners.discard(self)
        write_listeners.discard(self._count_write)  # (a step that raised left it listening)
        self.births.stop()

    def edited(self, changes: list) -> None:
        """Gradient-edit listener: clipping or unscaling rescaled gradients in place. A
        gradient an optimizer stepped with stays that gradient (a step repeated on it, with no
        backward since, is still a repeat); a gradient written otherwise (`copy_` of a new
        estimate) is a new one. A cleared gradient rescaled or clamped keeps its clearing call
        (whether it is still all zeros is read at the step)."""
        for entry in self.watched.values():
            versions = entry.last_versions
            for param, before in changes:
                grad = param._grad
                if grad is None:
                    continue
                if versions.get(id(param)) == (before, id(grad._data)):
                    versions[id(param)] = _version_of(grad)
                seen = entry.cleared_by.get(id(param))
                if seen is not None and _unchanged(seen[2], grad, (before, id(grad._data))):
                    entry.cleared_by[id(param)] = (*seen[:2], _state_of(grad))

    def cleared(self, params: list, call: str) -> None:
        """Gradient-clearing listener (zero_grad(), clipping to 0): where `call` cleared
        gradients a backward gave since an optimizer's previous step, it is kept with its
        line for the finding, should that step apply none of them."""
        location = None
        for entry in self.watched.values():
            for param in params:
                if id(param) in entry.given:
                    if location is None:
                        location = SourceLocation.capture(max_frames=2)
                    entry.cleared_by[id(param)] = (call, location, _state_of(param._grad))

    # -- what the optimizers do --------------------------------------------------------------
    def _watched(self, optimizer) -> WatchedOptimizer:
        entry = self.watched.get(id(optimizer))
        if entry is None:
            entry = self.watched[id(optimizer)] = WatchedOptimizer(optimizer, None)
        return entry

    def params_added(self, optimizer, params: list) -> None:
        """Optimizer listener: a parameter group was added; the first names the building line."""
        if id(optimizer) not in self.watched:
            entry = self.watched[id(optimizer)] = WatchedOptimizer(optimizer, _call_site(optimizer))
            entry.made_order = now()

    def stepping(self, optimizer) -> None:
        """Optimizer listener, before the update: judge the gradients it is about to use; on
        a sampled step, copy the parameters to measure the update."""
        entry = self._watched(optimizer)
        # a step that ended in an exception was never told `stepped`: only those still
        # running (`Optimizer._inside_step`) can hold this one inside them
        self.stepping_now = [other for other in self.stepping_now
                             if other is not entry and getattr(other.optimizer, "_inside_step", True)]
        held = {id(param) for param in entry.params()}
        outer = next((outer for outer in self.stepping_now
                      if held <= {id(param) for param in outer.params()}), None)
        self.stepping_now.append(entry)
        entry.inside = outer.name if outer is not None else None
        if outer is not None:  # stepped by the step of an optimizer holding its parameters:
            outer.stepped_inside = True  # that one judges (where it was not built, its groups were)
            if outer.made_at is None:
                outer.wraps = entry
            return
        entry.stepped_inside = False
        entry.versions = [_version_of(param) for param in entry.params()]
        entry.writes_before = self.writes_in_steps
        write_listeners.add(self._count_write)  # (until no step is in progress)
        calls = self.steps()
        step = calls - 1
        for param in entry.params():  # (a gradient looked at until it is not all zeros)
            grad = param._grad
            if grad is not None and id(param) not in self.stepped_with_grad:
                self.readings.read(param._device.xp, [grad._data.any()],  # (no sync on a GPU)
                                   functools.partial(self._stepped_with, id(param)))
        if entry.last_step_call is not None:
            self._judge_gradients(entry, calls, step)
        if entry.given:
            self._judge_cleared(entry, step)
        entry.before = None
        if step >= 0 and sampled(step) and entry.measuring_step != step:
            entry.measuring_step = step
            entry.before = {id(param): (param, param._device.xp.array(param._data, copy=True))
                            for param in entry.params()
                            if param._grad is not None and param._data.dtype in FLOATING_NUMPY_DTYPES}

    def _saw_write(self, tensor) -> None:
        """Write listener while an optimizer steps: something is written in place (its
        parameters or its state, through `.data` too)."""
        self.writes_in_steps += 1

    def _stepped_with(self, key: int, values: list) -> None:
        """A step used parameter `key`'s gradient, which was not all zeros if `values[0]`."""
        if values[0]:
            self.stepped_with_grad.add(key)

    def _judge_gradients(self, entry: WatchedOptimizer, calls: int, step: int) -> None:
        """A step with the gradients of the step before (no backward since), or with gradients
        that kept accumulating since that step (nothing cleared them): noted, with the line
        of the `step()` call (looked up only then)."""
        with_grads = [param for param in entry.params() if param._grad is not None]
        if calls == entry.last_step_call:
            same = all(entry.last_grads.get(id(param)) is not None
                       and entry.last_grads[id(param)]() is param._grad
                       and entry.last_versions[id(param)] == _version_of(param._grad)
                       for param in with_grads)
            if with_grads and same:
                if not entry.repeated:
                    self.live_findings += 1
                entry.repeated.append((step, _call_site(entry.optimizer)))
            return
        stale = [param for param in with_grads  # the very tensor it stepped with, not cleared
                 if self.accumulating_since.get(id(param), calls) < entry.last_step_call
                 and entry.last_grads.get(id(param)) is not None
                 and entry.last_grads[id(param)]() is param._grad]
        if stale:
            if not entry.stale:
                self.live_findings += 1
            entry.stale.append((step, _call_site(entry.optimizer),
                                [self.param_name(param) for param in stale], entry.last_step_at))

    def _judge_cleared(self, entry: WatchedOptimizer, step: int) -> None:
        """A step none of whose gradients from the backward calls since its previous step
        is left, though one of them was not zero: each set to None, or written since and now
        all zeros (noted with the line of the `step()` call). Gradients that were zero as
        the backward gave them (a hinge loss already satisfied) stay zero however they are
        scaled: no finding."""
        written = []
        for param, given, version, _ in entry.given.values():
            grad = param._grad
            if grad is None:
                continue
            if grad is given and _version_of(grad) == version:
                return  # as the backward left it: the step applies it
            written.append(grad)
        source = _call_site(entry.optimizer)
        given = list(entry.given.values())
        names = [self.param_name(param) for param, _, _, _ in given]

        def judge(values, found=(step, source, names, self._clearings(entry))):
            norms = [self.grad_norm_at(param, at) for param, _, _, at in given]
            if not any(values) and any(norm is None or norm != 0 for norm in norms):
                if not entry.cleared:
                    self.live_findings += 1
                entry.cleared.append(found)

        if not written:
            judge([])
            return
        self.readings.read(written[0]._device.xp, [grad._data.any() for grad in written], judge)

    def _clearings(self, entry: WatchedOptimizer) -> list:
        """How the gradients `entry` was given were cleared: [(call, its SourceLocation, "None"
        or "zeros", [param names])], call None where no clearing call seen left the gradient
        as it is now."""
        groups = {}
        for key, (param, _, _, _) in entry.given.items():
            grad = param._grad
            seen = entry.cleared_by.get(key)
            known = seen is not None and _unchanged(seen[2], grad)
            call, location = seen[:2] if known else (None, None)
            how = "None" if grad is None else "zeros"
            groups.setdefault((call, location, how), []).append(self.param_name(param))
        return [(*key, names) for key, names in groups.items()]

    @staticmethod
    def grad_norm_at(param, step: int) -> float | None:
        """The norm of `param`'s gradient as backward call `step` left it, where known (a
        `TraceSession` tells its `ParamWatch`'s; judged after that backward's readings)."""
        return None

    def stepped(self, optimizer) -> None:
        """Optimizer listener, after the update: measure it on a sampled step."""
        entry = self._watched(optimizer)
        if entry in self.stepping_now:
            self.stepping_now.remove(entry)
        if not self.stepping_now:
            write_listeners.discard(self._count_write)
        if entry.inside is not None:
            entry.steps += 1
            return
        if not entry.stepped_inside and entry.writes_before == self.writes_in_steps \
                and entry.versions == [_version_of(param) for param in entry.params()] \
                and any(param._grad is not None for param in entry.params()):
            entry.before = None  # it changed nothing it could have: a wrapper that skips the update
            return  # while gradients accumulate (Accelerate's); as if step() had not been called
        entry.given = {}
        entry.cleared_by = {}
        calls = self.steps()
        step = calls - 1
        entry.steps += 1
        entry.last_step_call = calls
        entry.last_step_at = _call_site(optimizer)
        entry.last_grads, entry.last_versions = last_grads, last_versions = {}, {}
        for param in entry.params():
            grad = param._grad
            if grad is not None:
                last_grads[id(param)] = weakref.ref(grad)
                last_versions[id(param)] = _version_of(grad)
        if entry.last_grads:
            entry.steps_with_gradients += 1
        self._event(step, "step", entry.name)
        groups = optimizer.param_groups
        while len(entry.lr) < len(groups):
            entry.lr.append(StepSeries())
        while len(entry.top_lr) < len(groups):
            entry.top_lr.append(0.0)
        measured = {} if entry.before is None else entry.before
        for index, (series, group) in enumerate(zip(entry.lr, groups)):
            lr = group.get("lr")
            if isinstance(lr, int | float) and step >= 0:
                series.add(step, float(lr))
                entry.top_lr[index] = max(entry.top_lr[index], lr)
                for param in group["params"]:
                    if id(param) in measured:
                        name = self.param_name(param)
                        self.measured_lr[name] = max(self.measured_lr.get(name, 0.0), lr)
        if entry.before is not None:
            self._measure(entry.before, step)
            entry.before = None

    def _measure(self, before: dict, step: int) -> None:
        for param, old in before.values():
            xp = param._device.xp
            grad = param._grad
            if old.ndim < 2:
                flat = old.reshape(-1)
                size = xp.linalg.norm(flat)
                xp.subtract(param._data, old, out=old)
                figures = [xp.linalg.norm(flat), size]  # the copy is ours: no new array
                if grad is not None:
                    figures.append(xp.linalg.norm(grad._data.reshape(-1)))
            else:  # the norms from the rows' (along dim 0), also summed where the gradient reached
                rows = old.reshape(old.shape[0], -1)
                # (the weights' figures before old becomes the change: on a GPU the kernels run
                # in this order)
                weights = _row_squares(xp, rows)
                xp.subtract(param._data, old, out=old)
                changes = _row_squares(xp, rows)
                figures = [xp.sqrt(changes.sum()), xp.sqrt(weights.sum())]
                if grad is not None:
                    reached = xp.any(grad._data.reshape(rows.shape[0], -1) != 0, axis=1)
                    figures += [xp.linalg.norm(grad._data.reshape(-1)),
                                xp.sqrt(xp.sum(xp.where(reached, changes, 0))),
                                xp.sqrt(xp.sum(xp.where(reached, weights, 0))),
                                xp.count_nonzero(reached) == reached.shape[0]]
            self.readings.read(xp, figures, lambda values, name=self.param_name(param), step=step:
                               self._measured(name, step, *values))

    def _measured(self, name: str, step: int, change: float, size: float, pull: float | None = None,
                  reached_change: float | None = None, reached_size: float | None = None,
                  all_rows: bool = True) -> None:
        """The norms of one parameter's update, of its weights before it and of its gradient;
        for a tensor of 2+ dimensions, the update's and the weights' on the rows the gradient
        reached, and whether it reached them all."""
        if pull == 0.0:
            self.silent_steps.setdefault(name, set()).add(step)
        if size == 0.0:
            self.grown_from_zero.add(name)  # zero-initialised: no scale to judge its updates by
        if pull is not None and (pull > size * NOTICEABLE or (size == 0.0 and pull > 0.0)):
            counts = self.moved.setdefault(name, [0, 0])  # a gradient a step should show
            counts[0] += 1
            counts[1] += change != 0.0
        if size > 0 and math.isfinite(size):
            self.update_ratios.setdefault(name, StepSeries()).add(step, change / size)
        if reached_size is not None and reached_size > 0 and math.isfinite(reached_size):
            self.reached_ratios.setdefault(name, StepSeries()).add(step,
                                                                   reached_change / reached_size)
            if not all_rows:
                self.rows_left_out[name] = self.rows_left_out.get(name, 0) + 1

    def step_skipped(self, optimizer) -> None:
        """A GradScaler skipped `optimizer`'s step (its gradients overflowed)."""
        self._watched(optimizer).skipped += 1

    def scheduler_stepped(self, scheduler) -> None:
        """Scheduler listener: a scheduler stepped; before its optimizer ever did?"""
        optimizer = getattr(scheduler, "optimizer", None)
        step = self.steps() - 1
        self._event(step, "scheduler_step", type(scheduler).__name__)
        if optimizer is None:
            return
        entry = self.watched.get(id(optimizer))
        if optimizer._step_calls or (entry is not None and entry.skipped):
            return
        if not self.scheduler_early:
            self.live_findings += 1
        self.scheduler_early.append((type(scheduler).__name__, type(optimizer).__name__,
                                     SourceLocation.capture(max_frames=2), step))

    def _event(self, step: int, kind: str, who: str) -> None:
        event = {"step": step, "kind": kind, "who": who}
        if len(self.events_first) < EVENTS_KEPT:
            self.events_first.append(event)
        else:
            self.events_last.append(event)

    # -- as each backward call starts ------------------------------------------------------
    def backward_started(self) -> None:
        """Note where each optimized parameter's gradient starts accumulating: at this call
        when it is None or all zeros, else it goes on from an earlier call."""
        calls = self.steps()
        since = self.accumulating_since
        at_start = self.grads_at_start
        at_start.clear()
        for entry in self.watched.values():
            last_step = entry.last_step_call
            for param in entry.params():
                grad = param._grad
                key = id(param)
                if grad is not None:
                    at_start[key] = (grad, _version_of(grad))
                if grad is None:
                    since[key] = calls
                elif last_step is not None and since.get(key, calls) < last_step:
                    since.setdefault(key, calls)  # zeroed since? (checked only where it matters)
                    self.readings.read(grad._device.xp, [grad._data.any()],
                                       lambda values, key=key, calls=calls:
                                       values[0] or since.__setitem__(key, calls))
                else:
                    since.setdefault(key, calls)

    def backward_finished(self) -> None:
        """Note, per optimizer, the parameters whose gradient the backward call that just
        finished wrote (a new tensor, or the one it had, changed)."""
        at_start = self.grads_at_start
        for entry in self.watched.values():
            for param in entry.params():
                grad = param._grad
                if grad is None:
                    continue
                before = at_start.get(id(param))
                version = _version_of(grad)
                if before is None or before[0] is not grad or before[1] != version:
                    entry.given[id(param)] = (param, grad, version, self.steps() - 1)
        at_start.clear()

    def learning_rates(self) -> dict:
        """{"Adam[0]": lr, ...}: each optimizer's parameter groups' current learning rates."""
        rates = {}
        for entry in self.watched.values():
            for index, group in enumerate(entry.optimizer.param_groups):
                lr = group.get("lr")
                if isinstance(lr, int | float):
                    rates[f"{entry.name}[{index}]"] = float(lr)
        return rates

    def param_name(self, param) -> str:
        """`param`'s name in findings and pictures: `name_of`'s, else its shape."""
        return self.name_of(param) or f"a parameter of shape {tuple(param.shape)}"


    # -- the result ------------------------------------------------------------------------
    def findings(self, params) -> list:
        """The findings (see `genesis.debug.optimizer_findings`); `params` is the session's
        `ParamWatch` (for not_optimized), or None."""
        return optimizer_findings(self, params)

    # -- the pictures ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The "optimizers" and "events" sections of trace.json's meta["history"]."""
        optimizers_seen = []
        for entry in self.watched.values():
            groups = []
            for index, group in enumerate(entry.optimizer.param_groups):
                lr = entry.lr[index].to_dict() if index < len(entry.lr) else None
                groups.append({"params": [self.param_name(param) for param in group["params"]],
                               "lr": lr})
            optimizers_seen.append({"name": entry.name, "made_at": source_text(entry.made_at),
                                    "steps": entry.steps, "groups": groups})
        return {"optimizers": optimizers_seen,
                "events": self.events_first + list(self.events_last)}


def _row_squares(xp, rows):
    """The squared norm of each row of a 2-D array, summed in float32 at least (float16
    squares overflow): one pass, without an array of the squares."""
    rows = rows.astype(xp.promote_types(rows.dtype, xp.float32), copy=False)
    return xp.einsum("ij,ij->i", rows, rows)


def _version_of(grad) -> tuple:
    """What changes when a gradient tensor is written: its version (in-place ops) and its
    array (`.data = ...`)."""
    return grad._version_counter[0], id(grad._data)


def _state_of(grad) -> tuple | None:
    """What tells whether a gradient was written later: None, or the gradient (weakly) and
    its version."""
    return None if grad is None else (weakref.ref(grad), _version_of(grad))


def _unchanged(state: tuple | None, grad, version: tuple | None = None) -> bool:
    """Whether `grad` is the gradient `state` was taken of, at the same version (`version`,
    or its current one)."""
    if state is None:
        return grad is None
    return grad is not None and state[0]() is grad and state[1] == (version or _version_of(grad))


def _call_site(optimizer) -> SourceLocation | None:
    """Where the script called into `optimizer` (its `step()`, its constructor): the line of
    that call, not a line inside a method of the optimizer's own class (a hand-written
    `step` calling its closure, an `__init__` calling `super().__init__`)."""
    own = _methods_code(type(optimizer))
    frame, depth, skip = sys._getframe(1), 1, 1
    while frame is not None:  # out to the first frame neither genesis's nor the class's
        if id(frame.f_code) in own:  # (by id: hashing a code object hashes its constants)
            skip = depth + 1
        elif not frame.f_globals.get("__name__", "").startswith("genesis."):
            break
        frame, depth = frame.f_back, depth + 1
    return SourceLocation.capture(max_frames=2, skip=skip + 1)


@functools.cache
def _methods_code(cls: type) -> dict:
    """{id: code object} of the methods `cls` and its bases define (decorators unwrapped),
    kept alive here so that an id stays its object's."""
    codes = {}
    for klass in cls.__mro__:
        for value in vars(klass).values():
            function = getattr(value, "__func__", value)
            if callable(function):
                code = getattr(inspect.unwrap(function), "__code__", None)
                if code is not None:
                    codes[id(code)] = code
    return codes
