"""`ForwardBuilds`: layers built anew inside a forward, whose parameters never train.

`genesis.nn.Module.__init__` tells `genesis.autograd.module_scope.build_listeners` of each
module whose construction starts while another module's forward runs. Each is put down
under the line that builds it: the innermost user frame outside an `__init__` (for a layer
built inside a block's `__init__`, the line in the forward that builds the block). Its own
parameters (not its children's, nor ones it was handed: `nn.Sequential(self.body, ...)`)
that require grad are its new ones. After each backward call the new parameters it reached
are noted, and at each optimizer step whether that optimizer holds them. `label_of` names
the parameters of a line with a finding for the parameter table, which knows them only by
their place in a graph ("input0").

The finding, with its rule:

- built_in_forward: a line inside a forward built new parameters that backward calls reached
  in 2 or more calls, each set in one backward call only (a module built once and kept, as
  `if self.head is None: self.head = nn.Linear(...)`, is reached again: no finding), and an
  optimizer stepped after 2 or more of those calls while none of the optimizers that stepped
  held any of them. Each step's parameters are new and no optimizer updates them, so they
  stay as initialised. Lazy modules (made in `__init__`, their parameters filled in by the
  first forward), modules without parameters (`nn.ReLU()` called in forward), a model and
  its optimizer made anew per fold or trial, and tensors made per step that are no
  module's parameters (noise, a constant weight for `F.linear`) are not built in a forward
  or build no parameters: no finding.

>>> import genesis
>>> from genesis import nn
>>> class Net(nn.Module):
...     def forward(self, x):
...         return nn.Linear(3, 1)(x)
>>> model, watch = Net(), ForwardBuilds()
>>> optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)  # none yet
Traceback (most recent call last):
ValueError: optimizer got an empty parameter list
>>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=0.1)
>>> watch.start()
>>> for step in range(3):
...     loss = model(genesis.ones(2, 3)).sum()  # (its graph holds the new Linear)
...     loss.backward()
...     watch.backward_finished(None, step)
...     watch.stepping(optimizer)
>>> watch.stop()
>>> [finding.title for finding in watch.findings()]
['a new Linear is built in each forward: its parameters never train']
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from ..autograd import module_scope
from ..autograd.source import SourceLocation
from .findings import Finding
from .parameter_uses import short_path

__all__ = ["ForwardBuilds", "LIVE_PER_SITE"]

LIVE_PER_SITE = 8  # the newest parameter sets of a line still watched for a second use
PRUNE_AT = 1024    # modules awaiting a backward call before the gone ones are dropped


@dataclass(eq=False)
class _Site:
    """One line that built modules inside a forward, and what became of their parameters."""

    frame: object                  # the autograd.source.Frame of the line
    built: str                     # the class of the first module built there
    forward: str                   # the class whose forward built it
    shapes: list = field(default_factory=list)  # of the first parameters reached
    steps: list = field(default_factory=list)   # backward calls that reached new ones
    stepped_over: int = 0          # of those, sets an optimizer step did not hold
    held: bool = False             # an optimizer that stepped held some of them
    reused: bool = False           # a set was reached by a second backward call
    live: list = field(default_factory=list)    # [weak references] of its newest reached sets


class ForwardBuilds:
    """Install with `start()`; the session calls `backward_finished(reached, step)` after
    each backward call (`reached`: the autograd nodes it sent gradient to, None to read
    `.grad`) and `stepping(optimizer)` before each optimizer step."""

    def __init__(self):
        self.pending = []    # (weak reference to a module, its _Site) not reached yet
        self.unjudged = []   # (_Site, [weak references]) reached, waiting for an optimizer step
        self.sites = {}      # Frame -> _Site
        self.origins = {}    # id(parameter) -> (weak reference, _Site, "Linear", "weight") of those reached
        self._prune_origins_at = PRUNE_AT

    def start(self) -> None:
        module_scope.build_listeners.add(self)

    def stop(self) -> None:
        module_scope.build_listeners.discard(self)

    def built(self, module) -> None:
        """Build listener: `module` is being built inside the forward that is running."""
        location = SourceLocation.capture(max_frames=6)
        if location is None:
            return
        frame = next((frame for frame in location.frames if frame.function != "__init__"),
                     location.frames[0])
        site = self.sites.get(frame)
        if site is None:
            site = self.sites[frame] = _Site(frame, type(module).__name__,
                                             type(module_scope.running.call[0]).__name__)
        if len(self.pending) >= PRUNE_AT:  # forwards without backward calls (evaluation)
            self.pending = [(ref, known) for ref, known in self.pending if ref() is not None]
        self.pending.append((weakref.ref(module), site))

    def backward_finished(self, reached, step: int) -> None:
        """Note the new parameters this backward call reached, and any set reached again."""
        for site in self.sites.values():
            for refs in site.live:
                if not site.reused and any(_reached(param, reached) for param in _alive(refs)):
                    site.reused = True
            site.live = [refs for refs in site.live if _alive(refs)]
        waiting, by_site = [], {}
        for ref, site in self.pending:
            module = ref()
            if module is None:
                continue
            named = [(name, param) for name, param in module.named_parameters(recurse=False)
                     if param.requires_grad]
            if not named:
                continue  # none of its own, or not made yet (still building)
            if any(_reached(param, reached) for _, param in named):
                by_site.setdefault(site, []).extend(param for _, param in named)
                for name, param in named:
                    self.origins[id(param)] = (weakref.ref(param), site, type(module).__name__, name)
            else:
                waiting.append((ref, site))
        self.pending = waiting
        if len(self.origins) >= self._prune_origins_at:  # (the sets of earlier calls are gone)
            self.origins = {key: origin for key, origin in self.origins.items()
                            if origin[0]() is not None}
            self._prune_origins_at = max(PRUNE_AT, 2 * len(self.origins))
        for site, params in by_site.items():
            refs = [weakref.ref(param) for param in params]
            if not site.steps:
                site.shapes = [tuple(param.shape) for param in params]
            site.steps.append(step)
            site.live = (site.live + [refs])[-LIVE_PER_SITE:]
            self.unjudged.append((site, refs))

    def stepping(self, optimizer) -> None:
        """Optimizer listener: whether the step about to run updates the new parameters reached
        since the previous step (a set no longer alive is held by no optimizer)."""
        if not self.unjudged:
            return  # the usual step: no new parameters to look for
        held = {id(param) for group in optimizer.param_groups for param in group["params"]}
        for site, refs in self.unjudged:
            if any(id(param) in held for param in _alive(refs)):
                site.held = True
            else:
                site.stepped_over += 1
        self.unjudged = []

    def findings(self) -> list:
        """One finding per line that built new parameters at each step, none of them trained."""
        found = []
        for site in self.sites.values():
            if not _never_trained(site):
                continue
            frame, calls = site.frame, len(site.steps)
            shapes = ", ".join("x".join(map(str, shape)) or "scalar" for shape in site.shapes)
            found.append(Finding(
                "built_in_forward", "error",
                f"a new {site.built} is built in each forward: its parameters never train",
                f"This line, run in the forward of {site.forward}, builds a new {site.built} "
                f"each time: {calls} backward calls each gave gradients to a new set of its "
                f"parameters ({shapes}), used in that call only. No optimizer that stepped was "
                "given any of them, so each set stays as initialised until the next forward "
                "builds another: the layer never learns. Build it once in "
                f"{site.forward}.__init__ and only call it in forward (if it is meant to stay "
                "fixed, build it once and call requires_grad_(False) on it).",
                source=str(frame), code=frame.code, step=site.steps[0],
                details={"module": site.built, "forward_of": site.forward,
                         "backward_calls": calls, "shapes": [list(shape) for shape in site.shapes]}))
        return found

    def built_in_forward(self, param) -> bool:
        """Whether `param` belongs to a module built inside a forward (reached or not yet)."""
        origin = self.origins.get(id(param))
        if origin is not None and origin[0]() is param:
            return True
        for ref, _ in self.pending:
            module = ref()
            if module is not None and any(value is param for value in module._parameters.values()):
                return True
        return False

    def label_of(self, tensor) -> str | None:
        """"Linear built at model.py:12 (weight)" for `tensor`, a parameter built at a line
        with a finding (its layer never trains), else None."""
        origin = self.origins.get(id(tensor))
        if origin is None or origin[0]() is not tensor or not _never_trained(origin[1]):
            return None
        _, site, built, name = origin
        return f"{built} built at {short_path(site.frame.file)}:{site.frame.line} ({name})"


def _never_trained(site: _Site) -> bool:
    """The rule of the finding: see the module's docstring."""
    return len(site.steps) >= 2 and site.stepped_over >= 2 and not site.held and not site.reused


def _alive(refs: list) -> list:
    return [param for param in (ref() for ref in refs) if param is not None]


def _reached(param, reached) -> bool:
    """Whether the backward call that gave `reached` (None: look at `.grad`) sent `param`
    gradient."""
    if reached is None:
        return param._grad is not None
    return param._accumulator is not None and param._accumulator in reached
