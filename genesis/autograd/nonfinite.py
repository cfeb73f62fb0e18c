"""Where a NaN or Inf comes from, and when it is a defect: the one rule that anomaly mode
and `genesis trace`'s NaN/Inf watch share.

A NaN or Inf is a defect only once it does harm. One born in forward (an op's output
holds it although the op's inputs did not) is followed from op to op, and is a defect when

- it reaches the loss: a tensor backward starts from holds it;
- a backward that saw it (its forward took it in or made it) returns a NaN/Inf gradient
  although the gradient it received was finite;
- an optimizer step writes it into a parameter (`judge_step`, which `genesis trace` calls):
  through the gradient it poisoned, so this is told as part of the defect of that gradient.

So a NaN computed and then discarded (`where(h > 0, h.log(), 0)`, where the log's NaN is
never picked) and an intended -inf that softmax, exp or max consume (a causal attention
mask) are no defects. A NaN/Inf returned by a backward that received finite gradients is
born there (the classic trap: `where(x > 0, x.sqrt(), 0)` at x == 0, whose backward divides
by zero although its forward is finite), and a defect once it does harm: it reaches a
leaf's gradient, or a gradient the backward call hands back (an input of `autograd.grad`)
or never passes on. One that a later backward drops is none: a padded query's attention row
masked to all -inf makes softmax's forward NaN and its backward NaN, `nan_to_num` keeps it
out of the loss and masked_fill's backward zeroes it before any parameter. Anomaly mode,
as PyTorch's, tells it at once (`gradient_at_birth`).

Every non-finite value carries its *origin*: the op call where it was born (for a NaN born
of an Inf, 0 * inf or inf - inf, also where that Inf came from), where it came in (a number
argument such as masked_fill's -inf, or an input tensor holding it that no watched op made:
data, or a parameter named as such), or the optimizer step that wrote it into a parameter.
A defect is told once, naming its origin; what follows from an origin already told (the ops
that consume it, the gradients it poisons, the parameters a step writes it into) is not
told again but noted as a knock-on of that defect.

>>> import genesis, numpy
>>> from genesis.autograd import engine, function
>>> told = []
>>> tracker = NonFiniteTracker(told.append)
>>> function.observers.add(tracker.forward); engine.node_checkers.add(tracker.backward)
>>> scores = genesis.randn(3, 3, requires_grad=True)
>>> mask = genesis.ones(3, 3).tril().log()                     # -inf above the diagonal
>>> with numpy.errstate(invalid="ignore"):
...     attention = (scores + mask).softmax(dim=-1)             # the -inf consumed: no defect
...     kept = genesis.where(mask == 0, mask * 0, scores)        # a NaN made and discarded: none
...     (attention + kept).sum().backward()
...     told == []
...     loss = scores.sum() + (mask * 0).sum()                   # a NaN that reaches the loss
...     loss.backward()
True
>>> function.observers.discard(tracker.forward); engine.node_checkers.discard(tracker.backward)
>>> [defect.title for defect in told]
['NaN born in forward: Mul']
"""
from __future__ import annotations

import math
import weakref
from typing import Callable

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor
from .nonfinite_counts import Census, all_finite, flat_arguments, input_shapes
from .nonfinite_report import (Defect, Origin, Wording, backward_message, forward_message, listing,
                               path_to, step_defect)
from .function import AccumulateGrad
from .source import SourceLocation
from .tensor_map import TensorMap

__all__ = ["NonFiniteTracker"]


class _Holder:
    """What one tensor carries: the `Origin` of its non-finite values, None when it holds none
    (or, on a GPU, until its counts are known)."""

    __slots__ = ("origin",)

    def __init__(self, origin: Origin | None = None):
        self.origin = origin


class _Unharmed:
    """A NaN/Inf born in a backward, not told yet: the defect, the origins its forward saw, the
    nodes whose backward called this one's (checkpoint's recomputation), and the report once
    it is told."""

    __slots__ = ("defect", "saw", "callers", "told")

    def __init__(self, defect: Defect, saw: list, callers: list):
        self.defect, self.saw, self.callers, self.told = defect, saw, callers, None


class NonFiniteTracker:
    """Follows non-finite values from op to op and into backward, calling `tell(defect)` for
    each defect the rule finds (see the module docstring); what `tell` returns is kept as the
    report the defect's origins were told in, and `note(report, line)` (when given) hears of
    each knock-on effect of a told defect that is not a defect of its own. With
    `nan_at_birth`, a NaN born in forward is told at once (anomaly mode raises there), not
    once it does harm; with `gradient_at_birth`, a NaN/Inf born in a backward likewise.
    Without it, `node_ran(node)` must hear of every node run while one waits (`sent_unharmed`
    is not empty) that `judge_backward` does not see, and `backward_done()` of the end of each
    outermost backward call. `wording` gives the tool's own advice lines; `name_of(tensor)` (when given) names a parameter, so a
    value that came in through one is said to come through it (not "input 1").

    `forward` is an observer (`genesis.autograd.function.observers`) and `backward` a node
    checker (`genesis.autograd.engine.node_checkers`); both look at the values at once. A
    caller that counts NaN/Inf elsewhere (on a GPU) and decides later uses `holder_of`,
    `hold`, `judge_forward` and `judge_backward`, in the order the ops ran. `judge_step`
    takes what an optimizer step left in its parameters.
    """

    def __init__(self, tell: Callable[[Defect], object],
                 note: Callable[[object, str], None] | None = None,
                 received_non_finite: bool = False, nan_at_birth: bool = False,
                 gradient_at_birth: bool = False, wording: Wording = Wording(),
                 name_of: Callable[[Tensor], str | None] | None = None):
        self._tell = tell
        self._note = note                          # note(told, line): a knock-on, in words
        # tell a backward returning NaN/Inf although the gradient it received was not finite
        # (anomaly mode, as PyTorch's: a non-finite gradient passed to backward, say)
        self._received_non_finite = received_non_finite
        # tell a NaN born in forward at once, not when it does harm (anomaly mode, which
        # raises: the traceback then points at the line that made it)
        self._nan_at_birth = nan_at_birth
        # tell a NaN/Inf born in a backward at once, not when it reaches a leaf's gradient
        # (anomaly mode, which raises there)
        self._gradient_at_birth = gradient_at_birth
        self._wording = wording
        self._name_of = name_of
        self._held = TensorMap()                   # tensor -> _Holder of what it carries
        self.held_ids = self._held.ids  # empty while nothing is held: `holding`, without a call
        self._seen = weakref.WeakKeyDictionary()   # node -> (origins that came in, {output_nr: origin})
        # node (an AccumulateGrad for a leaf) -> the report of the defect that made the
        # gradient it received non-finite
        self._poisoned = weakref.WeakKeyDictionary()
        # node -> the report of a defect told in a backward call made inside its backward
        self._told_inside = weakref.WeakKeyDictionary()
        # node -> the _Unharmed gradient defect sent to it, until the node runs (`node_ran`)
        self._sent_unharmed = weakref.WeakKeyDictionary()
        self.sent_unharmed = self._sent_unharmed  # (read per node by callers: no call when empty)

    # -- what tensors carry ------------------------------------------------------------
    def holder_of(self, tensor: Tensor) -> _Holder | None:
        """The holder of what `tensor` carries, if a watched op made it."""
        return self._held.get(tensor)

    @property
    def holding(self) -> bool:
        """Whether some live tensor carries what a watched op followed (or, on a GPU, may)."""
        return len(self._held) > 0

    @property
    def following_nothing(self) -> bool:
        """Whether nothing is followed: no live tensor carries a followed value and no leaf's
        gradient is known to be non-finite. An optimizer step that leaves its parameters
        finite then changes nothing here (`judge_step` would only forget what is not held)."""
        return not self.held_ids and not self._poisoned

    def hold(self, tensor: Tensor, origin: Origin | None = None) -> _Holder:
        """A new holder for what `tensor` (an op's output) carries."""
        holder = self._held[tensor] = _Holder(origin)
        return holder

    def aliased(self, tensor: Tensor, alias, how: str) -> None:
        """`alias` shares `tensor`'s values outside the graph (`.detach()`, `.data`: a
        `genesis.tensor.CutListener`): it carries what `tensor` carries, so a NaN that comes
        on through it is the one already followed, not one that came in from nowhere."""
        if self.held_ids and alias is not tensor and isinstance(alias, Tensor):
            holder = self._held.get(tensor)
            if holder is not None:
                self._held[alias] = holder

    def parameter_name(self, tensor: Tensor) -> str | None:
        """The name of `tensor` when it is a parameter (`name_of`), else None."""
        return self._name_of(tensor) if self._name_of is not None else None

    # -- on the host: look now ---------------------------------------------------------------
    def forward(self, node, args, outputs) -> None:
        """After an op call: follow the non-finite values in its outputs (nothing to do when
        they are all finite, the usual case)."""
        floating = [(nr, out) for nr, out in enumerate(outputs)
                    if isinstance(out, Tensor) and out._data.dtype in FLOATING_NUMPY_DTYPES]
        if all(all_finite(out) for _, out in floating):
            return
        if node._source is None:  # the call site is looked up only when something is found
            node._source = SourceLocation.capture()
        inputs = []
        for position, arg in enumerate(flat_arguments(args)):
            if isinstance(arg, Tensor) and arg._data.dtype in FLOATING_NUMPY_DTYPES:
                holder, census, name = self.holder_of(arg), Census.of(arg), None
                if not census.finite:
                    name = self.parameter_name(arg)
                    if holder is None and name is not None:
                        holder = self.hold(arg)
                inputs.append((position, census, holder, name))
        constants = [arg for arg in flat_arguments(args)
                     if isinstance(arg, float) and not math.isfinite(arg)]
        carried = self.judge_forward(node, inputs, constants,
                                     [(nr, Census.of(out)) for nr, out in floating],
                                     input_shapes(args), len(outputs))
        for nr, origin in carried.items():
            self.hold(outputs[nr], origin)

    def backward(self, node, grad_outputs, grad_inputs, flowed_from) -> None:
        """After a node's backward: a NaN/Inf it made, or one its root output carried."""
        roots = self.roots(node, grad_outputs, flowed_from)
        returned = [(index, Census.of(gradient)) for index, gradient in enumerate(grad_inputs)
                    if isinstance(gradient, Tensor) and not all_finite(gradient)]
        if not returned and roots is None:
            return
        incoming = all(not isinstance(g, Tensor) or all_finite(g) for g in grad_outputs)
        self.judge_backward(node, incoming, returned, flowed_from, roots)

    backward.keeps_gradients = False  # counts during the call (engine.NodeChecker)

    @staticmethod
    def roots(node, grad_outputs, flowed_from) -> list | None:
        """The outputs of `node` that backward started from (it is a root: no node sent it
        gradient), else None."""
        if node in flowed_from:
            return None
        return [nr for nr, gradient in enumerate(grad_outputs) if gradient is not None]

    # -- the rule, on counts taken wherever ------------------------------------------------
    def judge_forward(self, node, inputs: list, constants: list, outputs: list, shapes: str,
                      count: int) -> dict:
        """One op call: `inputs` are (position, Census, holder or None, parameter name or
        None) per floating tensor argument: its position among the arguments (lists opened),
        what `holder_of` gave (for a parameter holding NaN/Inf, `hold` made one), and
        `parameter_name` (needed only where the Census is not finite). `constants` are its
        non-finite number arguments, `outputs` (output_nr, Census) per floating output of the
        `count`. Returns output_nr -> Origin of each non-finite output. Nothing is told here:
        a value born here is a defect only once it does harm (a NaN born of an Inf already
        told is noted as a knock-on of that defect). A parameter's non-finite values that no
        watched op or step made are noted in its holder as having come in here."""
        output = next((census for _, census in outputs if not census.finite), None)
        arrived = [(Census.of_number(value), self._came_in(
            node, f"a number argument ({value})", output or Census.of_number(value), shapes,
            "of its output")) for value in constants]
        for position, census, holder, name in inputs:
            if census.finite:
                continue
            origin = holder.origin if holder is not None else None
            if origin is None:
                origin = _came_through(node, position, name, census, shapes)
                if holder is not None and name is not None:
                    holder.origin = origin
            arrived.append((census, origin))
        nan_in = any(census.nan for census, _ in arrived)
        carried = {}
        for nr, census in outputs:
            if census.finite:
                continue
            if census.nan and not nan_in:
                carried[nr] = self._nan_born(node, census, nr, count, shapes,
                                             [origin for came, origin in arrived])
            elif arrived:
                wanted = (lambda came: came.nan) if census.nan else (lambda came: came.inf)
                carried[nr] = next((origin for came, origin in arrived if wanted(came)), arrived[0][1])
            else:  # an Inf born here from finite inputs
                carried[nr] = _origin(node, census, shapes, nr, count)
        if arrived or carried:
            self._seen[node] = ([origin for _, origin in arrived], carried)
        return carried

    def judge_backward(self, node, incoming_finite: bool, returned: list, flowed_from,
                       roots: list | None) -> None:
        """One backward: `returned` are (input index, Census) of its gradients (the finite ones
        may be left out), `incoming_finite` whether the gradients it received were, `roots`
        what `roots()` said."""
        if self._sent_unharmed:
            self._sent_unharmed.pop(node, None)  # it ran: what it was sent goes on from here
        if roots:
            self._reached_the_loss(node, roots)
        index, census = next(((i, c) for i, c in returned if not c.finite), (None, None))
        if census is None:
            return
        if not incoming_finite and not self._received_non_finite:
            # non-finite already on the way in: not made here, part of what made it so
            self._pass_on(node, returned, self._poisoned.get(node))
            return
        seen = self._seen.get(node)
        saw = [] if seen is None else [*seen[0], *seen[1].values()]
        # a defect told in a backward call made inside this one's (checkpoint's
        # recomputation), or in what its forward saw: this follows from it
        earlier = self._told_inside.pop(node, None) or \
            next((origin.told for origin in saw if origin.told is not None), None)
        if earlier is not None:
            self._knock_on(earlier, f"{type(node).__name__} returned {census.kinds()} in its "
                                    f"gradient for input {index}: {census.counted()}")
            self._pass_on(node, returned, earlier)
            return
        title = f"{census.kinds()} produced by its backward: {type(node).__name__}"
        message = backward_message(node, index, census, flowed_from, saw, incoming_finite,
                                   self._wording)
        steps = path_to(node, flowed_from)
        born = _Unharmed(Defect("backward", title, message, type(node), node, node._source, index,
                                tuple(type(step).__name__ for step in steps) + (index,), steps[0]),
                         saw, _callers(node, flowed_from))
        self._pass_on(node, returned, self._told_now(born) if self._gradient_at_birth else born)

    def node_ran(self, node) -> None:
        """`node`'s backward has run: a NaN/Inf sent to it went on through `judge_backward`
        (or the node dropped it)."""
        self._sent_unharmed.pop(node, None)

    def backward_done(self) -> None:
        """An outermost backward call has ended: a NaN/Inf gradient sent to a node that never
        ran left the call unused by the graph (an input of `autograd.grad`, or a gradient
        `backward(inputs=...)` stopped at) and is told; one every node it reached dropped
        is forgotten."""
        waiting = list(self._sent_unharmed.values())
        self._sent_unharmed.clear()
        for born in waiting:
            self._told_now(born)

    def _told_now(self, born: "_Unharmed"):
        """The report of `born`, telling it if it was not told yet."""
        if born.told is None:
            born.told = self._report(born.defect, born.saw)
            for caller in born.callers:
                self._told_inside[caller] = born.told
        return born.told

    def judge_step(self, step: str, source: SourceLocation | None, parameters: list) -> list:
        """An optimizer step (`step`: "Adam.step", called at `source`) has updated its
        `parameters`: (holder, name, Census of its values, Census of its gradient, its
        AccumulateGrad node or None) each; the holder from `holder_of` (None allowed where
        the values are finite) or `hold`, the name and the gradient's Census needed only where
        the values are not finite. A parameter the step left non-finite (and that carried no
        non-finite values before) gets the origin "written into NAME by STEP": a knock-on of
        the defect that made its gradient non-finite, or, where none was told, a defect of its
        own at the step's line naming the parameters. Returns the reports it noted knock-ons
        in, each once."""
        written = []   # (report or None, [(name, census, gradient census, origin)])
        for holder, name, census, gradient, accumulator in parameters:
            told = self._poisoned.pop(accumulator, None) if accumulator is not None else None
            if census.finite:
                if holder is not None:
                    holder.origin = None
                continue
            if holder.origin is not None:  # it carried non-finite values already: not new
                continue
            how = "from a finite gradient" if gradient.finite else "from a non-finite gradient"
            holder.origin = Origin(None, None, source, census, "", written=(
                f"written into {name} by {step} {how}"))
            entries = next((entries for report, entries in written if report is told), None)
            if entries is None:
                entries = []
                written.append((told, entries))
            entries.append((name, census, gradient, holder.origin))
        noted = []
        for told, entries in written:
            origins = [origin for *_, origin in entries]
            if told is None:
                self._report(step_defect(step, source, entries, self._wording), origins)
                continue
            for origin in origins:
                origin.told = told
            at = f" at {source}" if source is not None else ""
            self._knock_on(told, f"{step}{at} wrote {listing(entries)}")
            noted.append(told)
        return noted

    def forget_gradient(self, accumulator) -> None:
        """Forget what made the gradient of a leaf (its AccumulateGrad node) non-finite: its
        step was skipped (by a GradScaler), so that gradient will not be used."""
        self._poisoned.pop(accumulator, None)

    # -- telling ---------------------------------------------------------------------------
    def _report(self, defect: Defect, origins: list):
        told = self._tell(defect)
        for origin in origins:
            origin.told = told
            for came in origin.came_in:
                came.told = told
        return told

    def _pass_on(self, node, returned: list, told) -> None:
        """Note `told` (a report, or an _Unharmed gradient defect) as what made the gradients
        `node` sends on non-finite. An _Unharmed one reaching a leaf's gradient is told."""
        if told is None:
            return
        children = node._next_nodes
        for index, census in returned:
            if not census.finite and index < len(children) and children[index] is not None:
                child = children[index]
                if isinstance(told, _Unharmed):
                    if told.told is not None:
                        told = told.told
                    elif child.__class__ is AccumulateGrad:  # harm: a leaf's gradient
                        told = self._told_now(told)
                    else:
                        self._sent_unharmed[child] = told
                self._poisoned[child] = told

    def _nan_born(self, node, census: Census, nr: int, count: int, shapes: str,
                  came_in: list) -> Origin:
        origin = _origin(node, census, shapes, nr, count)
        origin.came_in = came_in
        earlier = next((came.told for came in came_in if came.told is not None), None)
        if earlier is not None:  # 0 * an Inf already reported: the same defect, not a new one
            origin.told = earlier
            at = f" at {origin.source}" if origin.source is not None else ""
            self._knock_on(earlier, f"{origin.op} made {census.kinds()} from it{at}: "
                                    f"{census.counted()}")
        elif self._nan_at_birth:
            self._report(Defect("forward", f"{origin.born()} born in forward: {origin.op}",
                                forward_message(origin, wording=self._wording), type(node),
                                node, node._source), [origin])
        return origin

    def _knock_on(self, told, line: str) -> None:
        if self._note is not None:
            self._note(told, line)

    @staticmethod
    def _came_in(node, how: str, census: Census, shapes: str, counted_in: str) -> Origin:
        return Origin(type(node), weakref.ref(node), node._source, census, shapes, entered=how,
                      counted_in=counted_in)

    def _reached_the_loss(self, root, output_nrs: list) -> None:
        seen = self._seen.get(root)
        if seen is None:
            return
        for nr in output_nrs:
            origin = seen[1].get(nr)
            if origin is None or origin.told is not None:
                continue
            if origin.written is not None:
                title = f"{origin.census.kinds()} {_reach(origin.census)} the loss: {origin.written}"
            elif origin.entered is None:
                title = f"{origin.born()} born in forward: {origin.op}"
            else:
                title = (f"{origin.census.kinds()} {_reach(origin.census)} the loss: it came into {origin.op} "
                         f"through {origin.entered}")
            self._report(Defect("forward", title,
                                forward_message(origin, loss=root, wording=self._wording),
                                origin.node_type, origin.node() if origin.node else None,
                                origin.source), [origin])


def _reach(census: Census) -> str:
    """ "reaches" for NaN or Inf, "reach" for both."""
    return "reach" if census.nan and census.inf else "reaches"


def _origin(node, census: Census, shapes: str, nr: int, count: int) -> Origin:
    return Origin(type(node), weakref.ref(node), node._source, census, shapes, nr, count)


def _came_through(node, position: int, name: str | None, census: Census, shapes: str) -> Origin:
    """The origin of non-finite values that came into an op through its tensor argument at
    `position` (parameter `name`, when it is one) and that no watched op made."""
    entered, unmade = (f"parameter {name}", ", whose values no watched op or optimizer step made") \
        if name is not None else (f"input {position}", ", whose values no watched op made")
    return Origin(type(node), weakref.ref(node), node._source, census, shapes, entered=entered,
                  counted_in="of that input", unmade=unmade)


def _callers(node, flowed_from) -> list:
    """The nodes on the path to `node` whose backward made the backward call `node` is in
    (a root of such a call is noted in `flowed_from` as sent gradient by the caller, which
    does not take it as an input)."""
    steps = path_to(node, flowed_from)
    return [parent for parent, child in zip(steps, steps[1:])
            if all(next_node is not child for next_node in parent._next_nodes)]
