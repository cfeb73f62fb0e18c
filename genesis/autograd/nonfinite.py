"""Where a NaN or Inf comes from, and when it is a defect: the one rule that anomaly mode
and `genesis trace`'s NaN/Inf watch share.

- A NaN born in forward (an op's output holds NaN although none of its inputs does) is
  always a defect. When the inputs held Inf (0 * inf, inf - inf), the report says where
  that Inf came from.
- An Inf born in forward is a defect only once it does harm: it reaches the loss (a tensor
  backward starts from), a NaN is born from it, or a backward that saw it returns a
  NaN/Inf gradient. An intended -inf that softmax, exp or max consume (a causal attention
  mask) is not a defect.
- A NaN/Inf returned by a backward that received finite gradients is a defect.

Every non-finite value carries its *origin*: the op call where it was born, or where it
came in (a number argument such as masked_fill's -inf, or an input tensor holding it that
no watched op made). A defect is told once, naming its origin; what follows from an origin
already told (the ops that consume it, the gradients it poisons) is not told again.

>>> import genesis, numpy
>>> from genesis.autograd import function
>>> told = []
>>> tracker = NonFiniteTracker(told.append)
>>> function.observers.append(tracker.forward)
>>> mask = genesis.ones(3, 3).tril().log()               # -inf above the diagonal
>>> weights = (genesis.randn(3, 3) + mask).softmax(dim=-1)   # consumed: no defect
>>> with numpy.errstate(invalid="ignore"):
...     poisoned = mask * 0                               # 0 * -inf = NaN: a defect
>>> function.observers.remove(tracker.forward)
>>> [defect.title for defect in told]
['NaN born in forward: Mul']
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from ..tensor import Tensor
from .source import SourceLocation
from .tensor_map import TensorMap

__all__ = ["Census", "Origin", "Defect", "NonFiniteTracker", "all_finite", "input_shapes",
           "flat_arguments"]


class Census(NamedTuple):
    """How many of an array's `size` entries are NaN and how many are Inf."""

    size: int
    nan: int
    inf: int

    @classmethod
    def of(cls, tensor: Tensor) -> "Census":
        xp, data = tensor._device.xp, tensor._data
        if data.dtype.kind != "f":
            return cls(data.size, 0, 0)
        return cls(data.size, int(xp.isnan(data).sum()), int(xp.isinf(data).sum()))

    @classmethod
    def of_number(cls, value: float) -> "Census":
        return cls(1, int(math.isnan(value)), int(math.isinf(value)))

    @property
    def finite(self) -> bool:
        return not (self.nan or self.inf)

    def kinds(self) -> str:
        """ "NaN", "Inf" or "NaN and Inf": what the non-finite entries are."""
        return " and ".join(kind for kind, count in (("NaN", self.nan), ("Inf", self.inf)) if count)

    def counted(self) -> str:
        return f"{self.nan + self.inf} of {self.size} values"


def all_finite(tensor: Tensor) -> bool:
    """Whether every entry of `tensor` is finite (always, for a non-float one).

    On the CPU a float32/float64 array is first summed as the dot product with itself,
    one BLAS call: finite means every entry is; NaN or Inf (or squares past the dtype's
    range, 1e19 in float32) send it to the exact entry-by-entry test."""
    data = tensor._data
    if data.dtype.kind != "f":
        return True
    if data.dtype in _DOT_DTYPES and type(data) is np.ndarray:
        flat = data.reshape(-1)
        if math.isfinite(flat.dot(flat)):
            return True
    return bool(tensor._device.xp.isfinite(data).all())


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def flat_arguments(args):
    """An op call's arguments, lists and tuples opened."""
    for arg in args:
        if isinstance(arg, (list, tuple)):
            yield from flat_arguments(arg)
        else:
            yield arg


def input_shapes(args) -> str:
    """The shapes and dtypes of an op call's tensor arguments, for a report."""
    return ", ".join(f"{tuple(arg.shape)} {arg.dtype.name}" for arg in args if isinstance(arg, Tensor))


@dataclass(eq=False)
class Origin:
    """Where a non-finite value came from: born in op `node_type` from finite inputs
    (`entered` None), or brought into it by `entered` ("a number argument (-inf)", "input 0").
    `told` is what the defect it is part of was reported as, None while it has done no harm."""

    node_type: type
    node: Callable          # a weak reference to the op's autograd node
    source: SourceLocation | None
    census: Census          # of the output it appeared in (of the input, when it came in)
    shapes: str             # the op's inputs, in words
    output_nr: int = 0
    outputs: int = 1
    entered: str | None = None
    counted_in: str = ""    # what `census` counted, when it came in: "of its output", ...
    told: object = None

    @property
    def op(self) -> str:
        return self.node_type.__name__.removesuffix("Backward")

    def where(self) -> str:
        """One line: the op, how the value got there, and the source line."""
        how = "born there from finite inputs" if self.entered is None else \
            f"brought in by {self.entered}"
        at = f" at {self.source}: {self.source.code}" if self.source is not None else ""
        return f"{self.census.kinds()} in {self.op} ({how}){at}"


@dataclass
class Defect:
    """A NaN/Inf that is a defect, ready to report: `where` it was found ("forward" or
    "backward"), a title naming the right word (NaN, Inf) and the op, the full message, and
    the autograd node and source line it points at (`node` None once that node is gone)."""

    where: str
    title: str
    message: str
    node_type: type
    node: object
    source: SourceLocation | None


class _Holder:
    """What one tensor carries: the `Origin` of its non-finite values, None when it holds none
    (or, on a GPU, until its counts are known)."""

    __slots__ = ("origin",)

    def __init__(self, origin: Origin | None = None):
        self.origin = origin


class NonFiniteTracker:
    """Follows non-finite values from op to op and into backward, calling `tell(defect)` for
    each defect the rule finds (see the module docstring); what `tell` returns is kept as the
    report the defect's origins were told in, and `note(report, line)` (when given) hears of
    each knock-on effect of a told defect that is not a defect of its own.

    `forward` is an observer (`genesis.autograd.function.observers`) and `backward` a node
    checker (`genesis.autograd.engine.node_checkers`); both look at the values at once. A
    caller that counts NaN/Inf elsewhere (on a GPU) and decides later uses `holder_of`,
    `hold`, `judge_forward` and `judge_backward`, in the order the ops ran.
    """

    def __init__(self, tell: Callable[[Defect], object],
                 note: Callable[[object, str], None] | None = None,
                 received_non_finite: bool = False):
        self._tell = tell
        self._note = note                          # note(told, line): a knock-on, in words
        # tell a backward returning NaN/Inf although the gradient it received was not finite
        # (anomaly mode, as PyTorch's: a non-finite gradient passed to backward, say)
        self._received_non_finite = received_non_finite
        self._held = TensorMap()                   # tensor -> _Holder of what it carries
        self._seen = weakref.WeakKeyDictionary()   # node -> (origins that came in, {output_nr: origin})

    # -- what tensors carry ------------------------------------------------------------
    def holder_of(self, tensor: Tensor) -> _Holder | None:
        """The holder of what `tensor` carries, if a watched op made it."""
        return self._held.get(tensor)

    def hold(self, tensor: Tensor, origin: Origin | None = None) -> _Holder:
        """A new holder for what `tensor` (an op's output) carries."""
        holder = self._held[tensor] = _Holder(origin)
        return holder

    # -- on the host: look now ---------------------------------------------------------------
    def forward(self, node, args, outputs) -> None:
        """After an op call: follow the non-finite values in its outputs (nothing to do when
        they are all finite, the usual case)."""
        floating = [(nr, out) for nr, out in enumerate(outputs)
                    if isinstance(out, Tensor) and out._data.dtype.kind == "f"]
        if all(all_finite(out) for _, out in floating):
            return
        if node._source is None:  # the call site is looked up only when something is found
            node._source = SourceLocation.capture()
        inputs = []
        for position, arg in enumerate(flat_arguments(args)):
            if isinstance(arg, Tensor) and arg._data.dtype.kind == "f":
                holder = self.holder_of(arg)
                inputs.append((position, Census.of(arg),
                               holder.origin if holder is not None else None))
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
        returned = [(index, gradient) for index, gradient in enumerate(grad_inputs)
                    if isinstance(gradient, Tensor) and not all_finite(gradient)]
        if not returned and roots is None:
            return
        incoming = all(not isinstance(g, Tensor) or all_finite(g) for g in grad_outputs)
        self.judge_backward(node, incoming, [(index, Census.of(g)) for index, g in returned],
                            flowed_from, roots)

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
        """One op call: `inputs` are (position, Census, Origin or None) per floating tensor
        argument (its position among the arguments, lists opened), `constants` its non-finite
        number arguments, `outputs` (output_nr, Census) per floating output of the `count`.
        Returns output_nr -> Origin of each non-finite output; tells a NaN born here unless it
        follows from a defect already told."""
        output = next((census for _, census in outputs if not census.finite), None)
        arrived = [(Census.of_number(value), self._came_in(
            node, f"a number argument ({value})", output or Census.of_number(value), shapes,
            "of its output")) for value in constants]
        for position, census, origin in inputs:
            if not census.finite:
                arrived.append((census, origin if origin is not None else self._came_in(
                    node, f"input {position}, whose values no watched op made", census, shapes,
                    "of that input")))
        nan_in = any(census.nan for census, _ in arrived)
        carried = {}
        for nr, census in outputs:
            if census.finite:
                continue
            if census.nan and not nan_in:
                carried[nr] = self._nan_born(node, census, nr, count, shapes,
                                             [origin for _, origin in arrived])
            elif arrived:
                wanted = (lambda came: came.nan) if census.nan else (lambda came: came.inf)
                carried[nr] = next((origin for came, origin in arrived if wanted(came)), arrived[0][1])
            else:  # an Inf born here from finite inputs: a defect only once it does harm
                carried[nr] = _origin(node, census, shapes, nr, count)
        if arrived or carried:
            self._seen[node] = ([origin for _, origin in arrived], carried)
        return carried

    def judge_backward(self, node, incoming_finite: bool, returned: list, flowed_from,
                       roots: list | None) -> None:
        """One backward: `returned` are (input index, Census) of its gradients (the finite ones
        may be left out), `incoming_finite` whether the gradients it received were, `roots`
        what `roots()` said."""
        if roots:
            self._reached_the_loss(node, roots)
        if not incoming_finite and not self._received_non_finite:
            return  # non-finite already on the way in: not made here
        index, census = next(((i, c) for i, c in returned if not c.finite), (None, None))
        if census is None:
            return
        seen = self._seen.get(node)
        saw = [] if seen is None else [*seen[0], *seen[1].values()]
        earlier = next((origin.told for origin in saw if origin.told is not None), None)
        if earlier is not None:  # its forward saw a defect already told: this follows from it
            self._knock_on(earlier, f"{type(node).__name__} returned {census.kinds()} in its "
                                    f"gradient for input {index}: {census.counted()}")
            return
        title = f"{census.kinds()} produced by its backward: {type(node).__name__}"
        message = backward_message(node, index, census, flowed_from, saw, incoming_finite)
        self._report(Defect("backward", title, message, type(node), node, node._source), saw)

    # -- telling ---------------------------------------------------------------------------
    def _report(self, defect: Defect, origins: list) -> None:
        told = self._tell(defect)
        for origin in origins:
            origin.told = told

    def _nan_born(self, node, census: Census, nr: int, count: int, shapes: str,
                  came_in: list) -> Origin:
        origin = _origin(node, census, shapes, nr, count)
        earlier = next((came.told for came in came_in if came.told is not None), None)
        if earlier is not None:  # 0 * an Inf already reported: the same defect, not a new one
            origin.told = earlier
            at = f" at {origin.source}" if origin.source is not None else ""
            self._knock_on(earlier, f"{origin.op} made {census.kinds()} from it{at}: "
                                    f"{census.counted()}")
            return origin
        born = "NaN" if came_in else census.kinds()  # an Inf that came in was not born here
        self._report(Defect("forward", f"{born} born in forward: {origin.op}",
                            forward_message(origin, came_in=came_in), type(node), node,
                            node._source), [origin, *came_in])
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
            if origin.entered is None:
                title = f"{origin.census.kinds()} born in forward: {origin.op}"
            else:
                title = (f"{origin.census.kinds()} reaches the loss: it came into {origin.op} "
                         f"through {origin.entered}")
            self._report(Defect("forward", title, forward_message(origin, loss=root),
                                origin.node_type, origin.node(), origin.source), [origin])


def _origin(node, census: Census, shapes: str, nr: int, count: int) -> Origin:
    return Origin(type(node), weakref.ref(node), node._source, census, shapes, nr, count)


# -- the words ------------------------------------------------------------------------------

def forward_message(origin: Origin, came_in: list = (), loss=None) -> str:
    """The report of a NaN/Inf `origin` in forward: born there (from finite inputs, or NaN
    from the Inf of `came_in`), and, with `loss` (the root node backward started from), that
    it reached the loss."""
    which = f" (output {origin.output_nr})" if origin.outputs > 1 else ""
    if origin.entered is not None:
        first = (f"anomaly detected in forward: {origin.census.kinds()} came into {origin.op} "
                 f"through {origin.entered}: {origin.census.counted()} {origin.counted_in}")
        lines = [first, "This is where it came in:"]
    elif came_in:
        kinds = " and ".join(dict.fromkeys(came.census.kinds() for came in came_in))
        first = (f"anomaly detected in forward: {origin.op} produced NaN from inputs holding "
                 f"{kinds} but no NaN{which}: {origin.census.nan} of {origin.census.size} values "
                 "are NaN (0 * inf and inf - inf are NaN)")
        lines = [first, "This is where the NaN was born:"]
    else:
        first = (f"anomaly detected in forward: {origin.op} produced {origin.census.kinds()} from "
                 f"finite inputs{which}: {origin.census.counted()}")
        lines = [first, "This is where the non-finite value was born:"]
    lines.append(_describe(origin.source))
    if origin.shapes:
        lines.append(f"inputs: {origin.shapes}")
    if came_in:
        lines.append("The non-finite inputs came from:")
        lines.extend(f"  {came.where()}" for came in came_in)
    if loss is not None:
        at = f" at {loss._source}" if loss._source is not None else ""
        lines.append(f"It reached the loss: backward started from the output of "
                     f"{type(loss).__name__.removesuffix('Backward')}{at}, which holds it.")
    lines.append("If non-finite values are expected here, pass check_forward=False to detect_anomaly.")
    return "\n".join(lines)


def backward_message(node, index: int, census: Census, flowed_from, saw: list = (),
                     incoming_finite: bool = True) -> str:
    """The report of a NaN/Inf in the gradient `node`'s backward returned for input `index`
    (entries counted by `census`); `saw`: the origins of non-finite values its forward took
    in or made; `incoming_finite`: whether the gradient it received was finite."""
    name = type(node).__name__
    origin = "the gradient it received was finite, so this backward produced it" \
        if incoming_finite else "the gradient it received was already non-finite"
    lines = [f"anomaly detected in backward: {name} returned {census.kinds()} in its "
             f"gradient for input {index}: {census.counted()} ({origin})",
             f"The forward call that created {name}:",
             _describe(node._source)]
    if saw:
        lines.append("Its forward saw non-finite values:")
        lines.extend(f"  {origin.where()}" for origin in saw)
    lines.append("The gradient flowed from the root through:")
    lines.extend(f"  {step}" for step in _chain(node, flowed_from))
    lines.append("If non-finite gradients are expected here, pass check_nan=False to detect_anomaly.")
    return "\n".join(lines)


def _chain(node, flowed_from) -> list:
    """The nodes from the root to `node`, each with the line of its forward call."""
    path = [node]
    while path[-1] in flowed_from and len(path) <= len(flowed_from):
        path.append(flowed_from[path[-1]])
    steps = []
    previous = None
    for step in reversed(path):
        source = step._source
        if source is None:
            where = ""
        elif previous is not None and str(source) == str(previous):
            where = "  (same line)"
        else:
            where = f"  ({source}: {source.code})"
        previous = source
        steps.append(f"{type(step).__name__}{where}")
    return steps


def _describe(source) -> str:
    if source is None:
        return "  (unknown: the op ran before anomaly detection was turned on, or inside backward)"
    return source.describe()
