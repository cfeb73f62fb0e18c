"""`ModeWatch`: training steps that ran in eval mode because a `model.eval()` (a validation
pass's) was never undone by `model.train()`.

A module's mode matters when its class reads `training` (a method of it or of a base below
`Module`, other than `train`/`eval`/`__init__`/reprs, names the attribute: Dropout and its
kin, BatchNorm, InstanceNorm, RReLU, an RNN's or attention's dropout, a user's DropPath),
unless it sets the mode aside: `track_running_stats=False` (batch statistics either way),
or a dropout rate (`p` or `dropout`) of 0.

What the watch observes, at little cost: `Module.train()` tells it of each call the script
makes (`genesis.autograd.module_scope.mode_listeners`), with its line; after the run
starts, and after each such call, it listens to module calls until WINDOW_STEPS optimizer
steps have run (then nothing, until the next mode change). There it notes the calls of the
modules whose mode matters made with grad enabled, and their mode; after each backward call,
those that ran in its graph (their call, or when it left no node in the graph, as Dropout in
eval mode leaves none, the call around it, made ops the backward reached); at each optimizer
step, which of those backward calls gave gradients to parameters it updates (held, with a
gradient): those are *training steps*.

The finding, with its rule:

- left_in_eval_mode (a warning): modules whose mode matters ran in train mode in a training
  step, then in eval mode in a later training step, after a `train(False)`/`eval()` call on
  an ancestor of theirs (not on the module itself: `bn.eval()` on each BatchNorm, freezing
  its statistics, is done on purpose) set them to eval mode and no train() call set them
  back before that step's forward; they were still in eval mode when the optimizer stepped,
  and it updated parameters of the module the call was made on that the backward reached.
  Found at the line of that call, naming the modules and the first training step affected.
  Validation with `model.eval()` then `model.train()`, BatchNorm frozen from the first step
  on, a teacher in eval mode (its parameters are not stepped), a whole model fine-tuned in
  eval mode from the start, `model.eval()` inside a step undone before the step (adversarial
  examples, a gradient penalty), evaluation after training, EMA copies, and a model whose
  modules' mode does not matter are no finding.

>>> import genesis
>>> from genesis import nn
>>> from genesis.autograd import engine
>>> class AfterBackward:  # what the session does after each backward call
...     def backward_started(self, run): pass
...     def backward_finished(self, run, completed): watch.backward_finished(run, step)
>>> model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 1))
>>> optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
>>> watch, listener = ModeWatch(), AfterBackward()
>>> watch.start(); engine.backward_listeners.add(listener)
>>> for step in range(3):
...     if step == 1:
...         validated = model.eval()  # a validation pass, and no model.train() after it
...     optimizer.zero_grad()
...     model(genesis.randn(8, 4)).pow(2).mean().backward()
...     watch.stepping(optimizer)
...     optimizer.step()
>>> engine.backward_listeners.discard(listener); watch.stop()
>>> [(finding.title, finding.step, finding.details["modules"]) for finding in watch.findings()]
[('training went on in eval mode after model.eval()', 1, ['1'])]
"""
from __future__ import annotations

import functools
import re
import types
import weakref
from dataclasses import dataclass, field

from ..autograd import module_scope
from ..autograd.function import AccumulateGrad
from ..autograd.module_scope import running
from ..autograd.source import SourceLocation
from ..grad_state import grad_state
from ..nn.batchnorm import _BatchNorm
from ..nn.dropout import Dropout
from ..nn.instancenorm import _InstanceNorm
from ..nn.module import Module
from .findings import Finding
from .module_paths import module_paths
from .names import RootModules

__all__ = ["ModeWatch", "reads_training", "mode_matters", "WINDOW_STEPS"]

WINDOW_STEPS = 2  # optimizer steps watched after the start and after each mode change
NAMED = 6         # modules a finding names at most (the rest are counted)
NOT_FORWARD = frozenset({"train", "eval", "__init__", "extra_repr", "__repr__", "__setstate__"})
SET_ASIDE = (("track_running_stats", False), ("p", 0), ("dropout", 0))  # mode changes nothing
EVAL_CALL = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]]*\])*)"
                       r"\.(?:eval\(\s*\)|train\(\s*(?:mode\s*=\s*)?False\s*\))")


@functools.cache
def reads_training(cls) -> bool:
    """Whether a method of `cls`, or of a base class below `Module`, names an attribute
    `training` (reads `self.training`), leaving out train/eval/__init__ and the reprs.

    >>> from genesis import nn
    >>> reads_training(nn.Dropout), reads_training(nn.BatchNorm1d), reads_training(nn.Linear)
    (True, True, False)
    """
    for klass in cls.__mro__:
        if klass is Module or klass is object:
            continue
        for name, value in vars(klass).items():
            if name in NOT_FORWARD:
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, types.FunctionType) and _names_training(value.__code__):
                return True
    return False


def _names_training(code) -> bool:
    codes = [code]
    while codes:  # the function's own code, and its nested functions' and comprehensions'
        code = codes.pop()
        if "training" in code.co_names:
            return True
        codes.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return False


def mode_matters(module) -> bool:
    """Whether `module` behaves differently in train and eval mode: its class reads
    `training`, and it does not set the mode aside (no running statistics tracked, a dropout
    rate of 0).

    >>> from genesis import nn
    >>> mode_matters(nn.Dropout(0.1)), mode_matters(nn.Dropout(0.0)), mode_matters(nn.InstanceNorm1d(3))
    (True, False, False)
    """
    if not reads_training(type(module)):
        return False
    state = module.__dict__
    return not any(type(state.get(name)) in (bool, int, float) and state[name] == value
                   for name, value in SET_ASIDE)


@dataclass(eq=False)
class _Switch:
    """One train()/eval() call the script made, as it concerns one module below it."""

    owner: object       # weak reference to the module the call was made on
    site: object        # the autograd.source.Frame of the call, or None
    clock: int          # mode changes heard of so far, this one included
    direct: bool        # made on the module itself
    sets: bool          # the module's mode after the call is the one the call asked for


@dataclass(eq=False)
class _Site:
    """A line whose eval() call left training steps in eval mode."""

    frame: object
    owner: object       # the module the call was made on (held: named at the end)
    optimizer: str
    modules: dict = field(default_factory=dict)  # module -> (its call, first step, train step)


class ModeWatch:
    """Install with `start()`; the session calls `backward_finished(run, step)` after each
    completed backward call (`run`: the engine's flowed_from dict; `step`: its number) and
    `stepping(optimizer)` before each optimizer step; `findings()` at the end.

    Args:
        root_prefix: the path of an outermost module (`genesis.debug.names.RootModules.prefix`,
            the default): modules are named as the graphs name them.
    """

    def __init__(self, root_prefix=None):
        self.root_prefix = root_prefix if root_prefix is not None else RootModules().prefix
        self._listening = False
        self._steps_left = 0        # optimizer steps until the module calls go unheard again
        self._clock = 0             # train()/eval() calls heard of
        self._calls = []            # (module call, training, clock) since the last backward call
        self._pending = []          # (step, ids of parameters reached, calls) since the last step
        self._stepped = False       # an optimizer stepped since the last backward call
        self._switches = weakref.WeakKeyDictionary()  # module -> its latest _Switch
        self._trained = weakref.WeakKeyDictionary()   # module -> (step, clock) last in train mode
        self._sites = {}            # Frame -> _Site

    # -- listening -------------------------------------------------------------------
    def start(self) -> None:
        module_scope.mode_listeners.add(self)
        self._watch_steps()

    def stop(self) -> None:
        module_scope.mode_listeners.discard(self)
        self._listen(False)

    def _watch_steps(self) -> None:
        self._steps_left = WINDOW_STEPS
        self._listen(True)

    def _listen(self, on: bool) -> None:
        if on == self._listening:
            return
        self._listening = on
        if on:
            module_scope.listeners.add(self)
        else:
            module_scope.listeners.discard(self)
            self._calls = []

    # -- what the hooks see ------------------------------------------------------------
    def mode_set(self, module, mode: bool) -> None:
        """Mode listener: the script called `module.train(mode)` (or `eval()`)."""
        self._clock += 1
        concerned = [inner for inner in module.modules() if mode_matters(inner)]
        if concerned:
            site, owner = _call_site(module), weakref.ref(module)
            for inner in concerned:
                self._switches[inner] = _Switch(owner, site, self._clock, inner is module,
                                                inner.training is mode)
        self._watch_steps()

    def enter(self, module) -> None:
        """Module listener: a module's forward starts (only its mode is read)."""
        if grad_state.enabled and reads_training(module.__class__):
            self._calls.append((running.call, module.training, self._clock))

    def exit(self, module) -> None:
        """Module listener: a module's forward ends (nothing to note)."""

    def backward_finished(self, run, step: int) -> None:
        """Keep the noted calls that ran in the graph of this backward call, with the
        parameters it reached, until an optimizer steps."""
        if not self._listening:
            return
        if self._stepped:
            self._pending, self._stepped = [], False
        calls, self._calls = self._calls, []
        if not calls or run is None:
            return
        in_graph, reached = set(), set()  # module calls (by order) with ops it reached
        nodes = set(run)
        nodes.update(run.values())
        nodes.discard(None)
        for node in nodes:
            if node.__class__ is AccumulateGrad:
                if node.variable is not None:
                    reached.add(id(node.variable))
                continue
            call = node._module_call
            while call is not None and call[2] not in in_graph:
                in_graph.add(call[2])
                call = call[1]
        kept = [noted for noted in calls if _ran_in(noted[0], in_graph)]
        if kept:
            self._pending.append((step, reached, kept))

    def stepping(self, optimizer) -> None:
        """Optimizer listener: the backward calls since the last step whose parameters this
        step updates were training steps; judge the modes their modules ran in."""
        if not self._listening:
            return
        self._stepped = True
        if self._pending:
            updated = {id(param) for group in optimizer.param_groups for param in group["params"]
                       if param.grad is not None}
            for step, reached, calls in self._pending:
                if not reached.isdisjoint(updated):
                    self._judge(step, reached & updated, calls, optimizer)
        self._steps_left -= 1
        if self._steps_left <= 0:
            self._listen(False)

    def _judge(self, step: int, updated: set, calls: list, optimizer) -> None:
        owners_updated = {}  # id(owner) -> whether this step updated a parameter of it
        for call, training, clock in calls:
            module = call[0]
            if module.training is not training or not mode_matters(module):
                continue  # its mode changed before the step (set back for the loss), or is moot
            if training:
                self._trained[module] = (step, clock)
                continue
            switch, trained = self._switches.get(module), self._trained.get(module)
            if switch is None or trained is None or switch.direct or not switch.sets or \
                    switch.site is None or not trained[1] < switch.clock <= clock:
                continue
            owner = switch.owner()
            if owner is None:
                continue
            if id(owner) not in owners_updated:
                owners_updated[id(owner)] = any(id(param) in updated for param in owner.parameters())
            if not owners_updated[id(owner)]:
                continue
            site = self._sites.get(switch.site)
            if site is None:
                site = self._sites[switch.site] = _Site(switch.site, owner, type(optimizer).__name__)
            if module not in site.modules:
                site.modules[module] = (call, step, trained[0])

    # -- the finding ---------------------------------------------------------------------
    def findings(self) -> list:
        """One finding per eval() line that left training steps in eval mode."""
        return [self._finding(site) for site in self._sites.values()]

    def _finding(self, site: _Site) -> Finding:
        entries = sorted(site.modules.items(), key=lambda item: item[1][1])
        paths, _ = module_paths([call for _, (call, _, _) in entries], self.root_prefix)
        names = [paths[call[2]] for _, (call, _, _) in entries]
        first = entries[0][1][1]
        trained = max(train_step for _, (_, _, train_step) in entries)
        modules = [module for module, _ in entries]
        owner = _owner_name(site.owner, entries[0][1][0], self.root_prefix)
        listed = ", ".join(f"{name} ({type(module).__name__})"
                           for name, module in zip(names[:NAMED], modules))
        if len(names) > NAMED:
            listed += f" and {len(names) - NAMED} more"
        called = EVAL_CALL.search(site.frame.code)
        call_text = called.group(0) if called else f"train(False) on {owner}"
        receiver = called.group(1) if called else None
        still = all(not module.training for module in modules)
        message = (
            f"This call set {owner} to eval mode, and no train() call set it back before "
            f"training step {first}: that step's forward ran {listed} in eval mode, and "
            f"{site.optimizer}.step() updated {owner}'s parameters with the gradients of its "
            f"backward call. {'They' if len(modules) > 1 else 'It'} had run in train mode in "
            f"training step {trained}. {_effects(modules)}"
            + (f" {'They were' if len(modules) > 1 else 'It was'} still in eval mode when the "
               "run ended." if still else "")
            + f" Call {f'{receiver}.train()' if receiver else f'train() on {owner}'} before "
            "training resumes (at the start of each epoch, after validation); to keep a layer "
            "frozen on purpose, set that layer itself to eval mode (bn.eval()).")
        return Finding(
            "left_in_eval_mode", "warning", f"training went on in eval mode after {call_text}",
            message, module=owner, source=str(site.frame), code=site.frame.code or None,
            step=first, details={"modules": names, "owner": owner, "first_step": first,
                                 "train_step": trained, "optimizer": site.optimizer,
                                 "still_in_eval_mode": still})


def _ran_in(call, in_graph: set) -> bool:
    """Whether a module call ran in a graph whose calls are `in_graph`: the call around it
    made ops there (the module's own, if it made any, are among them; Dropout in eval mode
    makes none); an outermost call, when it made ops there itself."""
    return (call[1] or call)[2] in in_graph


def _effects(modules: list) -> str:
    """What eval mode changes in these modules, by family."""
    said = []
    if any(isinstance(module, Dropout) for module in modules):
        said.append("dropout is off (its input passes through)")
    if any(isinstance(module, (_BatchNorm, _InstanceNorm)) for module in modules):
        said.append("normalisation uses the running statistics instead of the batch's, and "
                    "no longer updates them")
    others = sorted({type(module).__name__ for module in modules
                     if not isinstance(module, (Dropout, _BatchNorm, _InstanceNorm))})
    if others:
        said.append(f"{', '.join(others)} behave{'s' if len(others) == 1 else ''} as in "
                    "evaluation (the forward reads `training`)")
    text = "; ".join(said)
    return f"In eval mode {text}."


def _owner_name(owner, call, root_prefix) -> str:
    """The path of the module an eval() call was made on, in the model whose call ran the
    modules it set (the model itself by its class name)."""
    while call[1] is not None:
        call = call[1]
    root = call[0]
    prefix = root_prefix(root) if root_prefix is not None else ""
    for name, module in root.named_modules():
        if module is owner:
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return path or type(owner).__name__
    return type(owner).__name__


def _call_site(module):
    """The script's line that called train()/eval() on `module`: the innermost user frame
    outside the overrides of train() and eval() in its classes."""
    location = SourceLocation.capture(max_frames=6)
    if location is None:
        return None
    overrides = [vars(klass)[name].__code__ for klass in type(module).__mro__
                 for name in ("train", "eval")
                 if isinstance(vars(klass).get(name), types.FunctionType) and klass is not Module]
    for frame in location.frames:
        if not any(_in_code(frame, code) for code in overrides):
            return frame
    return None


def _in_code(frame, code) -> bool:
    if frame.file != code.co_filename or frame.function != code.co_name:
        return False
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_firstlineno <= frame.line <= max(lines, default=code.co_firstlineno)
