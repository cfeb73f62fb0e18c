"""What a NaN/Inf defect says: where a non-finite value came from (`Origin`), the defect as
it is reported (`Defect`), a tool's own advice lines (`Wording`), and the messages built
from them. `genesis.autograd.nonfinite` decides which values are defects.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from .nonfinite_counts import Census
from .source import SourceLocation

__all__ = ["Origin", "Defect", "Wording", "forward_message", "backward_message", "step_defect",
           "path_to", "listing"]


@dataclass(eq=False)
class Origin:
    """Where a non-finite value came from: born in op `node_type` (`entered` None), brought
    into it by `entered` ("a number argument (-inf)", "input 0, whose values ..."), or, with
    `written` ("written into fc.weight by Adam.step from a non-finite gradient"), left in a
    parameter by an optimizer step (`node_type` and `node` None). `came_in`: for a NaN born of
    an Inf, the origins of the non-finite inputs it was born from. `told` is what the defect it
    is part of was reported as, None while it has done no harm."""

    node_type: type | None
    node: Callable | None   # a weak reference to the op's autograd node
    source: SourceLocation | None
    census: Census          # of the output it appeared in (of the input, when it came in)
    shapes: str             # the op's inputs, in words
    output_nr: int = 0
    outputs: int = 1
    entered: str | None = None
    counted_in: str = ""    # what `census` counted, when it came in: "of its output", ...
    unmade: str = ""        # after `entered`, for a tensor: ", whose values no watched op made"
    came_in: list = field(default_factory=list)
    written: str | None = None
    told: object = None

    @property
    def op(self) -> str:
        return self.node_type.__name__.removesuffix("Backward")

    def born(self) -> str:
        """What was born here, in the title's word: "NaN" for a NaN born of an Inf that came
        in (that Inf was not born here), else the kinds counted."""
        return "NaN" if self.came_in else self.census.kinds()

    def where(self) -> str:
        """One line: the op, how the value got there, and the source line."""
        at = f" at {self.source}: {self.source.code}" if self.source is not None else ""
        if self.written is not None:
            return f"{self.census.kinds()} {self.written}{at}"
        how = "born there from finite inputs" if self.entered is None else \
            f"brought in by {self.entered}"
        if self.came_in:
            how = "born there from the Inf of its inputs"
        return f"{self.census.kinds()} in {self.op} ({how}){at}"


@dataclass
class Defect:
    """A NaN/Inf that is a defect, ready to report: `where` it was found ("forward",
    "backward", or "step": an optimizer step that wrote it into a parameter), a title naming
    the right word (NaN, Inf) and the op, the full message, and the autograd node and source
    line it points at (`node_type` and `node` None for a step; `node` None once that node is
    gone). A backward's defect also says which input's gradient (`input_nr`), the node
    types from the root to its node (`path`: what identifies it where no source line was
    recorded), and the node backward started from (`root`)."""

    where: str
    title: str
    message: str
    node_type: type | None
    node: object
    source: SourceLocation | None
    input_nr: int | None = None
    path: tuple = ()
    root: object = None


class Wording(NamedTuple):
    """The lines a tool adds to its reports: what to do if a forward or backward defect is
    intended (`forward_advice`, `backward_advice`; left out when empty), and what stands for
    a forward call whose source line is not known (`unknown_source`)."""

    forward_advice: str = ""
    backward_advice: str = ""
    unknown_source: str = "(unknown: no source line was recorded for this op)"


def path_to(node, flowed_from) -> list:
    """The nodes from the root backward started at to `node` (`flowed_from`: the engine's
    map of each node to the node that first sent it gradient)."""
    steps = [node]
    while steps[-1] in flowed_from and len(steps) <= len(flowed_from):
        steps.append(flowed_from[steps[-1]])
    return steps[::-1]


def listing(entries: list) -> str:
    """ "NaN into fc.weight (6 of 6 values) and fc.bias (2 of 2 values)": what a step wrote."""
    kinds = " and ".join(dict.fromkeys(census.kinds() for _, census, *_ in entries))
    parts = [f"{name} ({census.counted()})" for name, census, *_ in entries[:4]]
    if len(entries) > 4:
        parts.append(f"{len(entries) - 4} more")
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"
    return f"{kinds} into {listed}"


# -- the words ------------------------------------------------------------------------------

def forward_message(origin: Origin, loss=None, wording: Wording = Wording()) -> str:
    """The report of a NaN/Inf `origin` in forward: born there (from finite inputs, or NaN
    from the Inf of `origin.came_in`) or come in, and, with `loss` (the root node backward
    started from), that it reached the loss."""
    which = f" (output {origin.output_nr})" if origin.outputs > 1 else ""
    if origin.written is not None:
        lines = [f"anomaly detected in forward: {origin.census.kinds()} {origin.written}: "
                 f"{origin.census.counted()}", "This is the step that wrote it:"]
    elif origin.entered is not None:
        first = (f"anomaly detected in forward: {origin.census.kinds()} came into {origin.op} "
                 f"through {origin.entered}{origin.unmade}: {origin.census.counted()} "
                 f"{origin.counted_in}")
        lines = [first, "This is where it came in:"]
    elif origin.came_in:
        kinds = " and ".join(dict.fromkeys(came.census.kinds() for came in origin.came_in))
        first = (f"anomaly detected in forward: {origin.op} produced NaN from inputs holding "
                 f"{kinds} but no NaN{which}: {origin.census.nan} of {origin.census.size} "
                 f"value{'s' if origin.census.size != 1 else ''} "
                 f"{'is' if origin.census.nan == 1 else 'are'} NaN (0 * inf and inf - inf are NaN)")
        lines = [first, "This is where the NaN was born:"]
    else:
        first = (f"anomaly detected in forward: {origin.op} produced {origin.census.kinds()} from "
                 f"finite inputs{which}: {origin.census.counted()}")
        lines = [first, "This is where the non-finite value was born:"]
    lines.append(_describe(origin.source, wording))
    if origin.shapes:
        lines.append(f"inputs: {origin.shapes}")
    if origin.came_in:
        lines.append("The non-finite inputs came from:")
        lines.extend(f"  {came.where()}" for came in origin.came_in)
    if loss is not None:
        at = f" at {loss._source}" if loss._source is not None else ""
        lines.append(f"It reached the loss: backward started from the output of "
                     f"{type(loss).__name__.removesuffix('Backward')}{at}, which holds it.")
    if wording.forward_advice:
        lines.append(wording.forward_advice)
    return "\n".join(lines)


def backward_message(node, index: int, census: Census, flowed_from, saw: list = (),
                     incoming_finite: bool = True, wording: Wording = Wording()) -> str:
    """The report of a NaN/Inf in the gradient `node`'s backward returned for input `index`
    (entries counted by `census`); `saw`: the origins of non-finite values its forward took
    in or made; `incoming_finite`: whether the gradient it received was finite."""
    name = type(node).__name__
    origin = "the gradient it received was finite, so this backward produced it" \
        if incoming_finite else "the gradient it received was already non-finite"
    torch_phrase = f"Function '{name}' returned nan values in its {index}th output. " \
        if "NaN" in census.kinds() else ""
    lines = [f"{torch_phrase}anomaly detected in backward: {name} returned {census.kinds()} in "
             f"its gradient for input {index}: {census.counted()} ({origin})",
             f"The forward call that created {name}:",
             _describe(node._source, wording)]
    if saw:
        lines.append("Its forward saw non-finite values:")
        lines.extend(f"  {origin.where()}" for origin in saw)
    lines.append("The gradient flowed from the root through:")
    lines.extend(f"  {step}" for step in _chain(node, flowed_from))
    if wording.backward_advice:
        lines.append(wording.backward_advice)
    return "\n".join(lines)


def step_defect(step: str, source, entries: list, wording: Wording) -> Defect:
    """The defect of an optimizer step that left NaN/Inf in parameters (`entries`: name,
    Census of its values, Census of its gradient, ...) from gradients no told defect made
    non-finite: finite ones (the update overflowed), or ones no watched backward made."""
    listed = listing(entries)
    kinds = listed.partition(" into ")[0]
    names = [name for name, *_ in entries]
    shown = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
    lines = [f"{step} wrote {listed}.", "This is the step:", _describe(source, wording)]
    finite = [name for name, _, gradient, *_ in entries if gradient.finite]
    poisoned = [name for name, _, gradient, *_ in entries if not gradient.finite]
    if finite:
        lines.append(f"{_gradients_of(finite)} {'was' if len(finite) == 1 else 'were'} finite: "
                     "the update itself went past the dtype's range (a learning rate or a "
                     "gradient far too large?).")
    if poisoned:
        lines.append(f"{_gradients_of(poisoned)} held NaN/Inf that no watched backward made: "
                     "set by hand, or a non-finite gradient passed to backward?")
    return Defect("step", f"{kinds} written into {shown} by {step}", "\n".join(lines), None,
                  None, source)


def _gradients_of(names: list) -> str:
    """ "The gradient of a", "The gradients of a, b and c"."""
    if len(names) == 1:
        return f"The gradient of {names[0]}"
    return f"The gradients of {', '.join(names[:-1])} and {names[-1]}"


def _chain(node, flowed_from) -> list:
    """The nodes from the root to `node`, each with the line of its forward call."""
    steps = []
    previous = None
    for step in path_to(node, flowed_from):
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


def _describe(source, wording: Wording) -> str:
    if source is None:
        return f"  {wording.unknown_source}"
    return source.describe()
