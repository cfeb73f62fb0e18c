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
  script's own code are cuts too (genesis's internals, such as `state_dict`, do not count).
- `genesis.autograd.module_scope.listeners`: the modules whose forward ran with gradients
  enabled (their parameters are expected to get one).

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
from dataclasses import dataclass

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
    reached an op that joined a graph (`fed`)."""

    how: str
    source: SourceLocation | None
    fed: bool = False
    order: int = 0   # cuts are numbered in the order they happened


@dataclass(frozen=True)
class Explanation:
    """Why a leaf may have received no gradient. `how` is ".detach()", ".detach_()",
    ".data" or "no_grad" (cut off there), "used" (an op with a graph took it as input, at
    `source`, but nothing from it reached the loss) or "unused" (no op took it as input)."""

    how: str
    source: SourceLocation | None = None

    def summary(self, plural: bool = False) -> str:
        """The reason in a few words, for a title."""
        if self.how == "unused":
            return "never used in the forward"
        if self.how == "used":
            return f"nothing computed from {'them' if plural else 'it'} reached the loss"
        return f"cut off by {'genesis.no_grad()' if self.how == 'no_grad' else self.how}"

    def describe(self, plural: bool = False) -> str:
        """The reason in words, with the line it points at."""
        if self.how == "unused":
            return "never used in the forward"
        where = _where(self.source)
        if self.how == "used":
            return (f"used in the forward{where}, but nothing computed from "
                    f"{'them' if plural else 'it'} reached the loss")
        by = "genesis.no_grad() (gradients disabled)" if self.how == "no_grad" else self.how
        return f"cut off from the loss{where} by {by}"


class ParameterUses:
    """Context manager (or `start()`/`stop()`): note uses and cuts of leaves while active;
    afterwards `explain(tensor)` says why a leaf could have got no gradient, and
    `ran_with_grad` holds the parameters of modules whose forward ran with grad enabled."""

    def __init__(self):
        self.cuts = {}            # (how, source) -> Cut
        self.ran_with_grad = {}   # id -> (Class.attribute, parameter) of modules run with grad
        self._uses = TensorMap()      # leaf -> SourceLocation of its first use
        self._cuts_of = TensorMap()   # leaf -> [Cut]
        self._carriers = TensorMap()  # value computed past a cut -> that Cut
        self._walks = {}          # (how, source) -> graphs walked there
        self._observer = self._observe
        self._cut_listener = self._cut
        self._active = False

    # -- installing ------------------------------------------------------------------
    def start(self) -> None:
        if self._active:
            return
        function.observers.add(self._observer)
        cut_listeners.add(self._cut_listener)
        module_scope.listeners.add(self)
        self._active = True

    def stop(self) -> None:
        if not self._active:
            return
        function.observers.discard(self._observer)
        cut_listeners.discard(self._cut_listener)
        module_scope.listeners.discard(self)
        self._carriers.clear()
        self._active = False

    def __enter__(self) -> "ParameterUses":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- what was seen ---------------------------------------------------------------
    def explain(self, leaf: Tensor) -> Explanation:
        """The earliest cut behind `leaf` that fed a graph; else its first use in an op with
        a graph; else "unused"."""
        fed = [cut for cut in self._cuts_of.get(leaf, ()) if cut.fed]
        if fed:
            cut = min(fed, key=lambda cut: cut.order)
            return Explanation(cut.how, cut.source)
        use = self._uses.get(leaf)
        if use is not None:
            return Explanation("used", use)
        return Explanation("unused")

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
    def _observe(self, node, args, outputs) -> None:
        if engine.unwatched.depth:
            return
        inputs = _tensors(args)
        if node.next_functions:  # the op joined a graph
            for value in inputs:
                carried = self._carriers.get(value)
                if carried is not None:
                    carried.fed = True
                elif value.grad_fn is None and value._requires_grad:
                    self._note_use(value, node)
            return
        if not grad_state.enabled and any(value._requires_grad for value in inputs):
            cut = self._new_cut("no_grad", SourceLocation.capture(max_frames=2),
                                [value for value in inputs if value._requires_grad])
        else:
            cut = next((c for c in map(self._carriers.get, inputs) if c is not None), None)
        if cut is not None:
            for output in outputs:
                if isinstance(output, Tensor) and not output._requires_grad:
                    self._carriers[output] = cut

    def _cut(self, tensor: Tensor, alias: Tensor, how: str) -> None:
        if not tensor._requires_grad or engine.unwatched.depth or _called_from_genesis():
            return
        cut = self._new_cut(how, SourceLocation.capture(max_frames=2), [tensor])
        self._carriers[alias] = cut

    # -- bookkeeping ---------------------------------------------------------------------
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
            leaves += _leaves_behind(computed)
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
    """The leaves that require grad which `values` (tensors made by ops) were computed from,
    found by an iterative walk of their graphs."""
    leaves = {}       # id -> leaf, in the order found
    visited = set()   # autograd nodes
    stack = [value.grad_fn for value in values]
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        if node.__class__ is AccumulateGrad:
            leaf = node.variable
            if leaf is not None:
                leaves.setdefault(id(leaf), leaf)
            continue
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return list(leaves.values())


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
