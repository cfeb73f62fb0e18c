"""Watch every op for NaN/Inf that is a defect, and record it instead of raising.

The rule is `genesis.autograd.nonfinite`'s: a NaN or Inf born in forward once it does harm
(it reaches the loss, a backward that saw it returns a NaN/Inf gradient, or an optimizer
step writes it into a parameter), a NaN/Inf made by a backward from finite gradients, and
one an optimizer step writes into a parameter from finite gradients. Each defect is found
once, at its origin, and its knock-on effects are not findings of their own; an intended
-inf that softmax consumes, or a NaN that `where` discards, is no finding at all. A run is never interrupted: the first defect at each source line
becomes one `Finding`, with a count of how often it happened. Calls made by gradcheck for
its own evaluations (`genesis.autograd.engine.unwatched`) are not the script's: not watched.

Under a GradScaler, gradients that overflow because the loss was scaled up are how the
scaler finds its scale: a backward defect in a call whose loss was scaled by more than 1
waits for the scaler's decision. If it skips the step (as it does on any NaN/Inf
gradient), the defect is dropped and the skip counted (`scaler_skips`); if a step is taken
anyway, or the run ends first, it is a finding. A defect that persists as the scaler backs
off is found once the scale is down to 1, where no scaling made it.

On a GPU the checks do not stop the host once per op: each op's finite and NaN counts
(of its outputs and of its inputs, in one launch: `_census`) are taken on the device and
handed to `readings`, and judged when it fetches (after each backward call, and at
`stop()`), in the order the ops ran, so the findings are those a CPU run gives. Inputs
on the CPU (a number-like 0-d tensor) are counted at once.
"""
from __future__ import annotations

import math
import weakref
from typing import Callable

import numpy as np

from ..autograd import engine, function
from ..autograd.nonfinite import NonFiniteTracker
from ..autograd.nonfinite_counts import Census, all_finite, flat_arguments, input_shapes
from ..autograd.nonfinite_report import Defect, Wording
from ..autograd.source import SourceLocation
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor, cut_listeners
from ._census import CENSUS
from .findings import Finding, add_knock_on
from .readings import Readings

__all__ = ["NaNWatch"]

_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class NaNWatch:
    """Install with `start()`; `findings` lists what was seen (each with its autograd node in
    `nodes`, so the caller can point it at a graph node; None when that node is gone, or for
    a step). Call `optimizer_stepped(optimizer)` after each optimizer step. `name_of(tensor)`
    names a parameter (None for other tensors), for the words of a finding."""

    def __init__(self, readings: Readings | None = None,
                 name_of: Callable[[Tensor], str | None] | None = None):
        self.findings = []
        self.nodes = []           # the autograd node of each finding
        self.readings = readings if readings is not None else Readings()
        self.tracker = NonFiniteTracker(self._add, self._knock_on, name_of=name_of, wording=Wording(
            unknown_source="(not recorded: genesis trace keeps the source lines of the ops of "
                           "the recorded backward calls, the first --steps; trace again with a "
                           "larger --steps to cover this one)"))
        self._by_site = {}        # (op, source) -> finding
        self._by_path = {}        # node types from the root, of a backward defect -> finding
        self.step = 0
        self.scaler_skips = 0     # steps a GradScaler skipped on gradients its scale overflowed
        self._scaled = weakref.WeakKeyDictionary()   # root node -> (scaler, scale)
        self._pending = []        # (scaler, finding, node, path): waiting on the scaler's decision
        self.on_new_finding = None  # called with (finding, node) as each new finding is filed
        # as an op observer, views of data are not shown to it while this is empty: while the
        # tracker follows nothing non-finite (see the note above `__call__`)
        self.sees_data_views = self.tracker.held_ids
        self._listening = False   # the tracker's `aliased` is a cut listener (`_follow_aliases`)
        self.leaf_seen = None     # called with each op's arguments (the NaN replay's leaves)

    def start(self) -> None:
        function.observers.add(self)
        engine.node_checkers.add(self._backward)

    def stop(self) -> None:
        function.observers.discard(self)
        engine.node_checkers.discard(self._backward)
        self.readings.fetch()
        self.backward_done()  # (a session calls it after each outermost backward call)
        self._file_pending()
        cut_listeners.discard(self.tracker.aliased)
        self._listening = False

    def _follow_aliases(self) -> None:
        """Hear of `.detach()` and `.data` (a cut listener: an alias carries what its tensor
        carries) exactly while the tracker follows a NaN/Inf: a run without one never pays."""
        following = bool(self.tracker.held_ids)
        if following != self._listening:
            if following:
                cut_listeners.add(self.tracker.aliased)
            else:
                cut_listeners.discard(self.tracker.aliased)
            self._listening = following

    # -- a GradScaler's decisions --------------------------------------------------------
    def loss_scaled(self, scaler, output: Tensor, scale: float) -> None:
        """`scaler.scale()` returned `output`: a backward started from it runs at `scale`."""
        if output.grad_fn is not None:
            self._scaled[output.grad_fn] = (scaler, scale)

    def step_skipped(self, scaler) -> None:
        """`scaler` skipped a step on NaN/Inf gradients: the defects that waited on it were
        its scale's overflow, no findings."""
        kept = [entry for entry in self._pending if entry[0] is not scaler]
        if len(kept) < len(self._pending):
            self.scaler_skips += 1
        self._pending = kept

    def _file_pending(self) -> None:
        """The defects that waited on a scaler's decision are findings after all."""
        pending, self._pending = self._pending, []
        for _, finding, node, path in pending:
            self._file(finding, node, path)

    # A view shares its values with the tensor it views: it can make no NaN/Inf, only show
    # what that tensor holds. A view of a tensor that requires no gradient (data: a
    # DataLoader indexes its dataset once per sample) is not looked at while nothing
    # non-finite is being followed (`sees_data_views`, read by `Function.apply`): a NaN in
    # the data is found at the first op that computes with the view, as having come in
    # there. Views of parameters are looked at, so a NaN that comes in through one is named
    # after the parameter.
    def __call__(self, node, args, outputs) -> None:
        """After an op call (this is the watch's `function.OpObserver`): its NaN/Inf outputs."""
        if len(outputs) == 1:  # the usual op: its one output, without building a list
            output = outputs[0]
            if not isinstance(output, Tensor) or output._data.dtype not in FLOATING_NUMPY_DTYPES:
                return
            checked = [(0, output)]
        else:
            checked = _floating(outputs)
            if not checked:
                return
        if engine.unwatched.depth:  # gradcheck's own evaluations: not the script's
            return
        first = checked[0][1]
        if self.leaf_seen is not None and first._requires_grad:  # an op of a graph
            self.leaf_seen(args)
        device = first._device
        if device.xp is not np:
            self._forward_on_device(node, args, checked, len(outputs), device)
            return
        for _, output in checked:
            data = output._data
            if data.dtype in _DOT_DTYPES:  # all_finite's first test, inline: one BLAS call
                flat = data.reshape(-1)
                if math.isfinite(flat.dot(flat)):
                    continue
            if not all_finite(output):  # the rare case: the tracker follows it
                self.tracker.forward(node, args, outputs)
                self._follow_aliases()
                return

    def _backward(self, node, grad_outputs, grad_inputs, flowed_from) -> None:
        if engine.unwatched.depth:
            return
        # Nothing to judge, the usual case, when the node is not a root (some node sent it
        # gradient) and every gradient it returned is finite: all_finite's first test, inline.
        settled = node in flowed_from
        first = True
        for gradient in grad_inputs:
            if not isinstance(gradient, Tensor):
                continue
            data = gradient._data
            if data.dtype not in FLOATING_NUMPY_DTYPES:
                continue
            if first:  # the first floating gradient's device decides
                if gradient._device.xp is not np:
                    self._backward_on_device(node, grad_outputs, _floating(grad_inputs),
                                             flowed_from)
                    return
                first = False
            if settled:
                if data.dtype in _DOT_DTYPES and type(data) is np.ndarray:
                    flat = data.reshape(-1)
                    settled = math.isfinite(flat.dot(flat))
                else:
                    settled = False
        if not settled:
            self.tracker.backward(node, grad_outputs, grad_inputs, flowed_from)
        elif self.tracker.sent_unharmed:  # a NaN/Inf sent to it, if any, stopped here
            self.tracker.node_ran(node)

    _backward.keeps_gradients = False  # counts during the call (engine.NodeChecker)

    # -- on a GPU: counts taken now, judged when the readings are fetched ------------
    def _forward_on_device(self, node, args, checked: list, count: int, device) -> None:
        tracker = self.tracker
        inputs = [(position, arg) for position, arg in enumerate(flat_arguments(args))
                  if isinstance(arg, Tensor) and arg._data.dtype in FLOATING_NUMPY_DTYPES]
        here = [(position, tensor) for position, tensor in inputs if tensor._device == device]
        elsewhere = {position: Census.of(tensor) for position, tensor in inputs
                     if tensor._device != device}  # a CPU number joining a GPU op: counted now
        # (a leaf that is a parameter gets a holder now: its counts are known only later)
        holders = [(position, _holder_or_parameter(tracker, tensor)) for position, tensor in inputs]
        made = [(nr, tracker.hold(output)) for nr, output in checked]  # known once judged
        constants = [arg for arg in flat_arguments(args)
                     if isinstance(arg, float) and not math.isfinite(arg)]
        if node._source is None:  # known only later whether it is needed: taken now
            node._source = SourceLocation.capture()
        shapes = input_shapes(args)
        layout = _layout(checked, here)  # sizes only: no array is kept alive until the fetch

        def judge(found: list) -> None:
            outputs, counted = _decided(layout, found)
            counted.update(elsewhere)
            carried = tracker.judge_forward(
                node, [(position, counted[position], *holder) for position, holder in holders],
                constants, outputs, shapes, count)
            for nr, holder in made:
                holder.origin = carried.get(nr)
        self.readings.read(device.xp, _counts(device, checked, here, self.readings), judge)

    def _backward_on_device(self, node, grad_outputs, checked: list, flowed_from) -> None:
        device = checked[0][1]._device
        incoming = _floating(grad_outputs)
        here = [(position, gradient) for position, gradient in incoming if gradient._device == device]
        finite_elsewhere = all(all_finite(gradient) for _, gradient in incoming
                               if gradient._device != device)
        roots = self.tracker.roots(node, grad_outputs, flowed_from)
        layout = _layout(checked, here)

        def judge(found: list) -> None:
            returned, counted = _decided(layout, found)
            incoming_finite = finite_elsewhere and all(census.finite for census in counted.values())
            self.tracker.judge_backward(node, incoming_finite, returned, flowed_from, roots)
        self.readings.read(device.xp, _counts(device, checked, here, self.readings), judge)

    def backward_done(self) -> None:
        """An outermost backward call has ended and its figures are judged: a NaN/Inf born
        in its backward that no node passed on to a leaf is told only if it left the call
        (`NonFiniteTracker.backward_done`)."""
        self.tracker.backward_done()
        self._follow_aliases()

    # -- after an optimizer step ---------------------------------------------------------
    def optimizer_stepped(self, optimizer) -> None:
        """What `optimizer.step()` left in its parameters (`NonFiniteTracker.judge_step`):
        NaN/Inf it wrote into one is a finding, or a knock-on of the finding that made the
        gradient non-finite. Counted on each parameter's device, judged on the host."""
        if engine.unwatched.depth:
            return
        self._file_pending()  # a step taken: non-finite gradients were not a scaler's to skip
        step = f"{type(optimizer).__name__}.step"
        by_device = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param._data.dtype in FLOATING_NUMPY_DTYPES:
                    by_device.setdefault(param._device, []).append(param)
        source = None
        for device, params in by_device.items():
            if device.xp is np:
                if self.tracker.following_nothing and _all_finite_on_host(params):
                    continue  # the usual step: finite values, nothing followed to update
                stepped = [self._stepped(param, _finite_census(param)) for param in params]
                if source is None and not all(census.finite for _, _, census, _, _ in stepped):
                    source = SourceLocation.capture()  # the step's line: needed only now
                self.tracker.judge_step(step, source, stepped)
                self._follow_aliases()
                continue
            if source is None:  # judged once fetched, when the step's line is gone
                source = SourceLocation.capture()
            checked = list(enumerate(params))
            grads = [(index, param._grad) for index, param in checked if param._grad is not None]
            layout = _layout(checked, grads)

            def judge(found: list, params=params, layout=layout) -> None:
                censuses, gradients = _decided(layout, found)
                self.tracker.judge_step(step, source, [
                    self._stepped(params[index], census, gradients.get(index))
                    for index, census in censuses])
            self.readings.read(device.xp, _counts(device, checked, grads, self.readings), judge)

    def _stepped(self, param: Tensor, census: Census, gradient: Census | None = None) -> tuple:
        """One entry of `judge_step`'s parameters: names and the gradient's count only where
        the values are not finite."""
        tracker = self.tracker
        if census.finite:
            return tracker.holder_of(param), None, census, None, param._accumulator
        if gradient is None:
            gradient = _finite_census(param._grad) if param._grad is not None else Census(0, 0, 0)
        holder = tracker.holder_of(param) or tracker.hold(param)
        name = tracker.parameter_name(param) or "a parameter"
        return holder, name, census, gradient, param._accumulator

    def _add(self, defect: Defect) -> Finding:
        """The finding of `defect`: filed now, or (a backward defect under a loss scale above
        1) when the GradScaler's decision is known."""
        node_type = defect.node_type
        forward_class = node_type._forward_cls if node_type is not None else None
        source = defect.source
        finding = Finding(
            f"nan_{defect.where}", "error", defect.title, defect.message,
            op=node_type.__name__ if node_type is not None else None,
            function=forward_class.node_name if forward_class is not None else None,
            source=str(source) if source is not None else None,
            code=source.code if source is not None else None,
            # (a step's defect is judged once the backward call before it has counted)
            details={"count": 1, "first_step": self.step - 1 if defect.where == "step" else self.step})
        scaled = self._scaled.get(defect.root) if defect.root is not None else None
        if scaled is not None and scaled[1] > 1:
            self._pending.append((scaled[0], finding, defect.node, defect.path))
            return finding
        return self._file(finding, defect.node, defect.path)

    def _file(self, finding: Finding, node, path: tuple) -> Finding:
        """Add `finding`, or count it in the one already made for its op at its source line
        (a different defect there is added to that one's message). A backward defect whose
        source line was not recorded (a later step) is the same as one found at the end of
        the same `path` of node types."""
        site = (finding.op, finding.source)
        existing = self._by_site.get(site)
        if existing is None and finding.source is None and path:
            existing = self._by_path.get(path)
        if existing is not None:  # the same op and line again (a later step, say): counted
            existing.details["count"] += 1
            if existing.kind != finding.kind or existing.title != finding.title:
                self._knock_on(existing, f"also, at step {finding.details['first_step']}: "
                                         f"{finding.title}")
            return existing
        self._by_site[site] = finding
        if path:
            self._by_path.setdefault(path, finding)
        self.findings.append(finding)
        self.nodes.append(node)
        if self.on_new_finding is not None:
            self.on_new_finding(finding, node)
        return finding

    @staticmethod
    def _knock_on(finding: Finding, line: str) -> None:
        """Add to `finding`'s message an effect it had that is not a finding of its own."""
        add_knock_on(finding, line)


def _holder_or_parameter(tracker: NonFiniteTracker, tensor: Tensor) -> tuple:
    """(holder or None, parameter name or None) of an op's input on a device: a parameter
    gets a holder, to note in it where its values came in should they prove non-finite."""
    holder = tracker.holder_of(tensor)
    name = tracker.parameter_name(tensor) if tensor.grad_fn is None else None
    if holder is None and name is not None:
        holder = tracker.hold(tensor)
    return holder, name


def _all_finite_on_host(tensors: list) -> bool:
    """Whether every host tensor of `tensors` holds finite values: `all_finite`, its first
    test inline (one BLAS call per float32/float64 array)."""
    for tensor in tensors:
        data = tensor._data
        if data.dtype in _DOT_DTYPES and type(data) is np.ndarray:
            flat = data.reshape(-1)
            if math.isfinite(flat.dot(flat)):
                continue
        if not all_finite(tensor):
            return False
    return True


def _finite_census(tensor: Tensor) -> Census:
    """The tensor's Census, counted only when `all_finite` (one pass) says it is needed."""
    return Census(tensor._data.size, 0, 0) if all_finite(tensor) else Census.of(tensor)


def _floating(tensors) -> list:
    """(position, tensor) of each floating-point tensor among `tensors`."""
    return [(position, tensor) for position, tensor in enumerate(tensors)
            if isinstance(tensor, Tensor) and tensor._data.dtype in FLOATING_NUMPY_DTYPES]


def _counts(device, checked: list, others: list, readings: Readings) -> list:
    """Device figures: the finite and NaN counts of each checked tensor, then of the others."""
    return CENSUS(device, [tensor._data for _, tensor in checked + others],
                  lambda count: readings.zeroed(device.xp, count))


def _layout(checked: list, others: list) -> tuple:
    """What `_decided` needs of the tensors `_counts` took figures of: positions and sizes."""
    return ([(position, tensor._data.size) for position, tensor in checked],
            [(position, tensor._data.size) for position, tensor in others])


def _decided(layout: tuple, found: list) -> tuple:
    """([(position, Census) of each checked tensor], {position: Census} of the others), from
    the counts `_counts` took."""
    censuses = []
    for slot, (position, size) in enumerate(layout[0] + layout[1]):
        finite, nan = int(found[2 * slot]), int(found[2 * slot + 1])
        censuses.append((position, Census(size, nan, size - finite - nan)))
    checked = len(layout[0])
    return censuses[:checked], dict(censuses[checked:])
