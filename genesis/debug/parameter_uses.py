"""Where the leaves of a run were used, and where their path to the loss was cut: the
bookkeeping that lets "received no gradient" say why.

While started (a session starts it for the steps it records), `ParameterUses` listens
to three hooks of the core:

- `genesis.autograd.function.observers`, every op. An op that joins a graph with a leaf
  among its inputs is a *use* of that leaf (the first one's source line is kept). An op
  run with gradients disabled (`genesis.no_grad()`) on inputs that require grad is a
  *cut* of the leaves behind those inputs. The outputs of a cut, and of any op computed
  from them without a graph, *carry* the cut; when a value carrying it reaches an op that
  joins a graph, the cut *fed the graph*: what came from the leaves was used in the
  forward, with its gradient path removed.
- `genesis.tensor.cut_listeners`: `.detach()`, `.detach_()` and `.data` called in the
  script's own code are cuts too (genesis's internals, such as `state_dict`, do not count),
  and so are `.item()` and `.tolist()`: the Python numbers they make are followed (as the
  same objects) into the ops that take them. An op whose result carries no gradient (an
  integer cast, argmax, a comparison) is a cut of what its inputs were computed from.
  Each cut keeps, per leaf behind it, the ops between the leaf and the cut. A user's
  `Function` runs its forward with gradients disabled, and joins the graph itself: what its
  forward computes is no cut; the leaves behind its inputs are noted as passed through it
  (its backward may return None for them).
- `genesis.autograd.module_scope.listeners`: the modules whose forward ran with gradients
  enabled (their parameters are expected to get one).

An op that joins a graph while a backward pass runs is part of a derivative being built
(`autograd.grad(..., create_graph=True)`, as score matching, gradient penalties and PINNs
do): the leaves taken by the op whose backward made it are noted as *differentiated
through*. A leaf that enters its output only additively (an energy network's last bias)
drops out of that derivative; if nothing else reaches the loss from it, the loss does not
depend on it, by construction (`differentiated_away`).

Calls marked `genesis.autograd.engine.unwatched` (gradcheck's evaluations) are skipped.

>>> import genesis
>>> w = genesis.randn(3, requires_grad=True)
>>> b = genesis.randn(3, requires_grad=True)
>>> uses = ParameterUses()
>>> with uses:
...     features = (w * 2).detach()
...     loss = (features * b).sum()
>>> uses.explain(w).how, uses.explain(b).how
('.detach()', 'used')
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from ..autograd import engine, function, module_scope
from ..autograd.function import AccumulateGrad
from ..autograd.grad_mode import grad_state
from ..autograd.source import SourceLocation
from ..autograd.tensor_map import TensorMap
from ..tensor import Tensor, cut_listeners

__all__ = ["ParameterUses", "Cut", "Explanation", "short_path"]

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
WALKS_PER_SITE = 2  # graphs walked per cut site to find the leaves behind it (a loop repeats them)


@dataclass(eq=False)
class Cut:
    """One place where values computed from leaves left the graph: how (".detach()",
    ".detach_()", ".data" or "no_grad"), where, and whether a value carrying it later
    reached an op that joined a graph (`fed`), in the forward of which backward calls
    (`fed_in`, numbered from 0)."""

    how: str
    source: SourceLocation | None
    fed: bool = False
    fed_in: set = field(default_factory=set)
    order: int = 0   # cuts are numbered in the order they happened
    paths: dict = field(default_factory=dict)  # id of a leaf behind it -> ops from it to the cut


@dataclass(frozen=True)
class Explanation:
    """Why a leaf may have received no gradient. `how` is ".detach()", ".detach_()",
    ".data" or "no_grad" (cut off there), "used" (an op with a graph took it as input, at
    `source`, but nothing from it reached the loss), "function" (what was computed from it
    went into the user's Function named `function`, at `source`, and no gradient came back
    through it), "unused" (no op took it as input) or
    "unrecorded" (no op took it as input in the recorded steps, no model holding it ran in
    them, and backward calls followed that were not recorded: what happened is not known) or
    "replaced" (no op took it as input, and the model that ran holds another tensor under
    its name now: its module was swapped for a new one after it was named)."""

    how: str
    source: SourceLocation | None = None
    path: tuple = ()   # the ops from the leaf to the cut, in forward order
    function: str | None = None  # the user's Function it went into ("function")

    def summary(self, plural: bool = False) -> str:
        """The reason in a few words, for a title."""
        if self.how == "unused":
            return "never used in the forward"
        if self.how == "unrecorded":
            return "not used in the recorded steps"
        if self.how == "replaced":
            return "no longer in the model"
        if self.how == "used":
            return f"nothing computed from {'them' if plural else 'it'} reached the loss"
        if self.how == "function":
            return f"no gradient came back through {self.function}.backward"
        return f"cut off by {'genesis.no_grad()' if self.how == 'no_grad' else self.how}"

    def describe(self, plural: bool = False) -> str:
        """The reason in words, with the line it points at."""
        if self.how == "unused":
            return "never used in the forward"
        if self.how == "unrecorded":
            return (f"no op took {'them' if plural else 'it'} as input in the recorded backward "
                    f"calls, and no model holding {'them' if plural else 'it'} ran in them")
        if self.how == "replaced":
            return (f"no op took {'them' if plural else 'it'} as input in the recorded steps, "
                    "and the model that ran there "
                    f"holds other tensors under {'their names' if plural else 'its name'} now: "
                    f"the module that held {'them' if plural else 'it'} was replaced by a new one")
        where = _where(self.source)
        if self.how == "used":
            return (f"used in the forward{where}, but nothing computed from "
                    f"{'them' if plural else 'it'} reached the loss")
        if self.how == "function":
            return (f"what was computed from {'them' if plural else 'it'} went into the custom "
                    f"Function {self.function}{where}, and no gradient came back through it")
        by = "genesis.no_grad() (gradients disabled)" if self.how == "no_grad" else self.how
        path = f", after {' -> '.join(self.path)}" if self.path else ""
        return f"cut off from the loss{where} by {by}{path}"


class ParameterUses:
    """Context manager (or `start()`/`stop()`): note uses and cuts of leaves while active;
    afterwards `explain(tensor)` says why a leaf could have got no gradient, and
    `ran_with_grad` holds the parameters of modules whose forward ran with grad enabled.
    `steps()` says how many backward calls have finished (the forward seen is the next's)."""

    def __init__(self, steps=lambda: 0):
        self.steps = steps
        self.cuts = {}            # (how, source) -> Cut
        self.ran_with_grad = {}   # id -> (Class.attribute, parameter) of modules run with grad
        self._uses = TensorMap()      # leaf -> SourceLocation of its first use
        self._cuts_of = TensorMap()   # leaf -> [Cut]
        self._carriers = TensorMap()  # value computed past a cut -> that Cut
        self._numbers = {}        # id of a Python number made by .item()/.tolist() -> (it, Cut)
        self._walks = {}          # (how, source) -> graphs walked there
        self._functions_of = TensorMap()  # leaf -> (name, source) of the first user Function
        #                                   that took what was computed from it
        self._differentiated = TensorMap()  # leaf -> True: taken by an op whose backward
        #                                     built a derivative (create_graph)
        self._cut_listener = self._cut
        self._active = False

    # -- installing ------------------------------------------------------------------
    def start(self) -> None:
        if self._active:
            return
        function.observers.add(self)
        cut_listeners.add(self._cut_listener)
        module_scope.listeners.add(self)
        self._active = True

    def stop(self) -> None:
        if not self._active:
            return
        function.observers.discard(self)
        cut_listeners.discard(self._cut_listener)
        module_scope.listeners.discard(self)
        self._carriers.clear()
        self._numbers.clear()
        self._active = False

    def __enter__(self) -> "ParameterUses":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- what was seen ---------------------------------------------------------------
    def explain(self, leaf: Tensor, calls=frozenset()) -> Explanation:
        """The earliest cut behind `leaf` that fed a graph (of those that fed the forward of
        one of the backward calls `calls`, when there are any: the call an optimizer holding
        `leaf` stepped after); else its first use in an op with a graph; else "unused"."""
        fed = [cut for cut in self._cuts_of.get(leaf, ()) if cut.fed]
        fed = [cut for cut in fed if cut.fed_in & calls] or fed
        if fed:
            cut = min(fed, key=lambda cut: cut.order)
            return Explanation(cut.how, cut.source, tuple(cut.paths.get(id(leaf), ())))
        use = self._uses.get(leaf)
        through = self._functions_of.get(leaf)
        if use is not None and through is not None:
            return Explanation("function", through[1], function=through[0])
        if use is not None:
            return Explanation("used", use)
        return Explanation("unused")

    def differentiated_away(self, leaf: Tensor) -> bool:
        """Whether `leaf`, used in the forward with no cut behind it, was taken by an op the
        script differentiated with create_graph=True (see the module docstring): a leaf that
        then gets no gradient is one the loss, built from that derivative, does not depend
        on (an energy network's last bias under score matching)."""
        return leaf in self._differentiated and self.explain(leaf).how == "used"

    def first_use(self, leaf: Tensor) -> SourceLocation | None:
        """Where an op with a graph first took `leaf` as input, if one did."""
        return self._uses.get(leaf)

    # -- module_scope listener -------------------------------------------------------
    def enter(self, module) -> None:
        if grad_state.enabled and not engine.unwatched.depth:
            for attribute, param in module._parameters.items():
                if isinstance(param, Tensor):
                    self.ran_with_grad[id(param)] = (f"{type(module).__name__}.{attribute}", param)

    def exit(self, module) -> None:
        pass

    # -- the core's hooks ----------------------------------------------------------------
    sees_backward = True  # (as an op observer: the ops of a derivative being built too)

    def __call__(self, node, args, outputs) -> None:
        """As an op observer (`genesis.autograd.function.OpObserver`): note the op's uses,
        cuts and carriers; in a backward pass, only the leaves differentiated through."""
        if engine.unwatched.depth:
            return
        if grad_state.in_backward:
            if node._next_nodes:  # joined a graph: a derivative being built (create_graph)
                self._note_differentiated(engine.running_node())
            return
        inputs = _tensors(args)
        numbers = self._carried_numbers(args) if self._numbers else []
        if node._next_nodes:  # the op joined a graph
            for value in inputs:
                carried = self._carriers.get(value)
                if carried is not None:
                    self._fed(carried)
                elif value.grad_fn is None and value._requires_grad:
                    self._note_use(value, node)
            for carried in numbers:
                self._fed(carried)
            if not type(node)._forward_cls._builtin:
                self._through_function(node, inputs, outputs)
            if grad_state.enabled and not any(isinstance(output, Tensor) and output._requires_grad
                                              for output in outputs):
                # an op whose result carries no gradient (an integer cast, argmax, a
                # comparison): what is computed from that result is cut off from the inputs
                cut = self._new_cut(_without_gradient(node), SourceLocation.capture(max_frames=2),
                                    [value for value in inputs if value._requires_grad])
                for output in outputs:
                    if isinstance(output, Tensor):
                        self._carriers[output] = cut
            return
        if not grad_state.enabled and any(value._requires_grad for value in inputs):
            cut = self._new_cut("no_grad", SourceLocation.capture(max_frames=2),
                                [value for value in inputs if value._requires_grad])
        else:
            cut = next((c for c in map(self._carriers.get, inputs) if c is not None),
                       numbers[0] if numbers else None)
        if cut is not None:
            for output in outputs:
                if isinstance(output, Tensor) and not output._requires_grad:
                    self._carriers[output] = cut

    def _through_function(self, node, inputs: list, outputs) -> None:
        """A user's Function joined a graph: its outputs, made in its forward with gradients
        disabled, carry no cut (the Function's node links them to its inputs); the leaves
        behind those inputs are noted as passed through it."""
        for output in outputs:
            if isinstance(output, Tensor):
                self._carriers.discard(output)
        name = type(node)._forward_cls.__name__
        source = node._source if node._source is not None else SourceLocation.capture(max_frames=2)
        key = ("function", name, source)
        leaves = [value for value in inputs if value._requires_grad and value.grad_fn is None]
        computed = [value for value in inputs if value._requires_grad and value.grad_fn is not None]
        walks = self._walks.get(key, 0)
        if computed and walks < WALKS_PER_SITE:
            self._walks[key] = walks + 1
            leaves += [leaf for leaf, _ in _leaves_behind(computed)]
        for leaf in leaves:
            if leaf not in self._functions_of:
                self._functions_of[leaf] = (name, source)

    def _cut(self, tensor: Tensor, alias, how: str) -> None:
        if not tensor._requires_grad or engine.unwatched.depth or _called_from_genesis():
            return
        cut = self._new_cut(how, SourceLocation.capture(max_frames=2), [tensor])
        if isinstance(alias, Tensor):
            self._carriers[alias] = cut
            return
        for number in _floats(alias):  # .item() / .tolist(): the Python numbers made
            if len(self._numbers) < _NUMBERS_KEPT:
                self._numbers[id(number)] = (number, cut)

    def _carried_numbers(self, args) -> list:
        """The cuts behind the Python numbers made by .item()/.tolist() among `args` (the
        same objects, one level into lists and tuples)."""
        found = []
        for arg in args:
            for item in (arg if arg.__class__ in (list, tuple) else (arg,)):
                entry = self._numbers.get(id(item))
                if entry is not None and entry[0] is item:
                    found.append(entry[1])
        return found

    # -- bookkeeping ---------------------------------------------------------------------
    def _fed(self, cut: Cut) -> None:
        cut.fed = True
        cut.fed_in.add(self.steps())

    def _note_differentiated(self, node) -> None:
        """The leaves `node` (whose backward builds a derivative now) took as inputs."""
        if node is None:
            return
        for child in node._next_nodes:
            if child.__class__ is AccumulateGrad and child.variable is not None:
                self._differentiated[child.variable] = True

    def _note_use(self, leaf: Tensor, node) -> None:
        if leaf not in self._uses:
            self._uses[leaf] = node._source if node._source is not None else \
                SourceLocation.capture(max_frames=2)

    def _new_cut(self, how: str, source, values: list) -> Cut:
        """The cut at (how, source), and the leaves behind `values` noted as cut there: the
        leaves among them always, those further back by walking their graphs at most
        WALKS_PER_SITE times per site (a loop repeats the same cut)."""
        key = (how, source)
        cut = self.cuts.get(key)
        if cut is None:
            cut = self.cuts[key] = Cut(how, source, order=len(self.cuts))
        computed = [value for value in values if value.grad_fn is not None]
        leaves = [value for value in values if value.grad_fn is None]
        walks = self._walks.get(key, 0)
        if computed and walks < WALKS_PER_SITE:
            self._walks[key] = walks + 1
            behind = _leaves_behind(computed)
            for leaf, path in behind:
                cut.paths.setdefault(id(leaf), path)
            leaves += [leaf for leaf, _ in behind]
        for leaf in leaves:
            cuts = self._cuts_of.setdefault(leaf, list)
            if cut not in cuts:
                cuts.append(cut)
        return cut


def _tensors(args) -> list:
    """The tensors among an op's arguments, one level into lists and tuples (cat, stack)."""
    found = []
    for arg in args:
        if isinstance(arg, Tensor):
            found.append(arg)
        elif arg.__class__ in (list, tuple):
            found.extend(item for item in arg if isinstance(item, Tensor))
    return found


def _leaves_behind(values: list) -> list:
    """[(leaf, path)]: the leaves that require grad which `values` (tensors made by ops) were
    computed from, each with the ops between it and `values` in forward order (at most
    PATH_OPS named), found by an iterative breadth-first walk of their graphs."""
    leaves = {}                                      # id -> (leaf, path), in the order found
    parents = {value.grad_fn: None for value in values}  # node -> the node it was reached from
    queue = [value.grad_fn for value in values]
    for node in queue:  # grows as it goes: breadth first, so each path is a shortest one
        if node.__class__ is AccumulateGrad:
            leaf = node.variable
            if leaf is not None and id(leaf) not in leaves:
                leaves[id(leaf)] = (leaf, _path_to(parents, parents[node]))
            continue
        for child in node._next_nodes:
            if child is not None and child not in parents:
                parents[child] = node
                queue.append(child)
    return list(leaves.values())


PATH_OPS = 6  # ops named on the way from a leaf to a cut


def _path_to(parents: dict, node) -> list:
    """The names of the ops from `node` up to the walk's start (forward order)."""
    names = []
    while node is not None:
        forward = getattr(type(node), "_forward_cls", None)
        names.append(forward.node_name if forward is not None else type(node).__name__)
        node = parents[node]
    if len(names) > PATH_OPS:
        names = names[:PATH_OPS // 2] + ["..."] + names[-(PATH_OPS // 2):]
    return names


_NUMBERS_KEPT = 4096  # Python numbers made by .item()/.tolist() followed, at most


def _floats(value) -> list:
    """The float objects in a number or (nested) list of numbers, at most _NUMBERS_KEPT."""
    if isinstance(value, float):
        return [value]
    found, stack = [], [value]
    while stack and len(found) < _NUMBERS_KEPT:
        item = stack.pop()
        if isinstance(item, float):
            found.append(item)
        elif isinstance(item, list):
            stack.extend(item)
    return found


_WITHOUT_GRADIENT = {"ToCopy": "an integer cast", "Argmax": "argmax", "Argmin": "argmin",
                     "Gt": "a comparison (>)", "Ge": "a comparison (>=)", "Lt": "a comparison (<)",
                     "Le": "a comparison (<=)", "Eq": "a comparison (==)", "Ne": "a comparison (!=)"}


def _without_gradient(node) -> str:
    """How an op whose result carries no gradient is named in a cut."""
    forward = getattr(type(node), "_forward_cls", None)
    name = forward.node_name if forward is not None else type(node).__name__
    return f"{_WITHOUT_GRADIENT.get(name, name)} (its result carries no gradient)"


def _called_from_genesis() -> bool:
    """Whether the `.detach()`/`.data` being reported was called by genesis's own code: the
    frames are this function, `_cut`, `genesis.tensor._tell_cut`, the Tensor method, then
    its caller."""
    return sys._getframe(4).f_code.co_filename.startswith(_GENESIS_DIR)


def _where(source) -> str:
    if source is None:
        return ""
    code = source.code
    return f" at {short_path(source.file)}:{source.line}" + (f" (`{code}`)" if code else "")


def short_path(path: str) -> str:
    """`path` relative to the working directory when it lies below it, else as it is."""
    try:
        relative = os.path.relpath(path)
    except (ValueError, OSError):  # another drive (Windows), or the working directory is gone
        return path
    return path if relative.startswith(os.pardir) else relative
