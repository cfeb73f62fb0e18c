"""`ModeWatch`: training steps that ran in eval mode because a `model.eval()` (a validation
pass's) was never undone by `model.train()`.

A module's mode matters when its class reads `training` (a method of it or of a base below
`Module`, other than `train`/`eval`/`__init__`/reprs, names the attribute: Dropout and its
kin, BatchNorm, InstanceNorm, RReLU, an RNN's or attention's dropout, a user's DropPath),
unless it sets the mode aside: `track_running_stats=False` (batch statistics either way),
or a dropout rate (`p` or `dropout`) of 0.

What the watch observes, at little cost: `Module.train()` tells it of each call the script
makes (`genesis.autograd.module_scope.mode_listeners`), with its line, and
`Module.__setattr__` of each `training` the script sets by hand (`m.training = False`,
outside train() and the overrides of it), with its line; after the run
starts, and after each such call, it listens to module calls until WINDOW_STEPS optimizer
steps have run (then nothing, until the next mode change). There it notes the calls of the
modules whose mode matters made with grad enabled, and their mode; after each backward call,
for each of those that ran in its graph, the parameters whose gradients passed through it:
those its ops' gradients flow on to (Dropout in eval mode makes no op: those of the module
call that made its input, the last one started before it in the same model call with ops
in the graph); at each optimizer step, which of those parameters it updates (holds, with a
gradient). A backward call that gave gradients to parameters a step then updates is a
*training step*, for the modules those gradients passed through.

The finding, with its rule:

- left_in_eval_mode (a warning): modules whose mode matters ran in train mode in a training
  step, then in eval mode in a later training step, after a `train(False)`/`eval()` call on
  an ancestor of theirs (not on the module itself: `bn.eval()` on each BatchNorm, freezing
  its statistics, is done on purpose) set them to eval mode and no train() call set them
  back before that step's forward; they were still in eval mode when the optimizer stepped,
  and it updated parameters of the module the call was made on whose gradients passed
  through them. Found at the line of that call, naming the modules and the first training
  step affected. Validation with `model.eval()` then `model.train()`, BatchNorm frozen from
  the first step on, a teacher in eval mode (its parameters are not stepped), a whole model
  fine-tuned in eval mode from the start, a head trained on features computed in eval mode
  (no updated parameter below them), `model.eval()` inside a step undone before the step
  (adversarial examples, a gradient penalty), evaluation after training, EMA copies, and a
  model whose modules' mode does not matter are no finding.

  A mode set by hand (`for m in model.modules(): m.training = False`,
  `model.drop.training = False`) is judged the same way, with the model the module ran in
  as the module the call was made on, and found at the assignment's line; there the module
  itself may be the one set (nothing else is), but normalisation layers (BatchNorm,
  InstanceNorm) are not judged where the line set only such layers to eval mode (statistics
  frozen by hand on purpose, as `bn.eval()`). Setting `training` back to True by hand undoes
  it, as train() does.

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

import bisect
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
CALLS_KEPT = 4096  # calls not in a graph yet, kept for the next backward calls (the newest)
NAMED = 6         # modules a finding names at most (the rest are counted)
NOT_FORWARD = frozenset({"train", "eval", "__init__", "extra_repr", "__repr__", "__setstate__"})
SET_ASIDE = (("track_running_stats", False), ("p", 0), ("dropout", 0))  # mode changes nothing
NORMS = (_BatchNorm, _InstanceNorm)  # their mode set by hand alone: statistics frozen on purpose
ASSIGNED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]]*\])*)\.training\s*=\s*False\b")
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

    owner: object       # weak reference to the module the call was made on; None for a mode
    #                     set by hand (`m.training = False`): the model the module ran in
    site: object        # the autograd.source.Frame of the call or assignment, or None
    clock: int          # mode changes heard of so far, this one included
    direct: bool        # made on the module itself
    evals: bool         # a train(False) call that left the module in eval mode


@dataclass(eq=False)
class _Site:
    """A line whose eval() call left training steps in eval mode."""

    frame: object
    owner: object       # the module the call was made on (held: named at the end)
    optimizer: str
    by_hand: bool       # an assignment to `training`, not a train()/eval() call
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
        self._calls = []            # (module call, training, clock) not in a backward's graph yet
        self._pending = []          # (step, [ids of the parameters reached], [(call, training,
        #                             clock, mask of those its gradients passed through)]),
        #                             the backward calls since the last optimizer step
        self._stepped = False       # an optimizer stepped since the last backward call
        self._switches = weakref.WeakKeyDictionary()  # module -> its latest _Switch
        self._trained = weakref.WeakKeyDictionary()   # module -> (step, clock) last in train mode
        self._sites = {}            # Frame -> _Site
        self._unfreezing = set()    # Frames that set by hand a module other than a norm layer
        #                             to eval mode (not only freezing BatchNorm statistics)

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
                                                not mode and not inner.training)
        self._watch_steps()

    def mode_assigned(self, module, mode) -> None:
        """Mode listener: the script assigned `module.training = mode` by hand."""
        self._clock += 1
        site = _call_site(module, assigned=True) if mode_matters(module) else None
        if site is not None:
            self._switches[module] = _Switch(None, site, self._clock, False, not mode)
            if not mode and not isinstance(module, NORMS):
                self._unfreezing.add(site)
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
        calls = self._calls
        if not calls or run is None:
            return
        nodes = set(run)
        nodes.update(run.values())
        nodes.discard(None)
        masks, params = _parameters_below(nodes)
        below, in_graph = {}, {}  # module call's order -> parameters below its ops; the call
        for node in nodes:
            mask, call = masks[node], node._module_call
            while call is not None:
                below[call[2]] = below.get(call[2], 0) | mask
                in_graph[call[2]] = call
                call = call[1]
        orders = sorted(in_graph)
        kept, left = [], []
        for call, training, clock in calls:
            key = call[2] if call[2] in below else _input_call(call, orders, in_graph)
            if key is not None:
                kept.append((call, training, clock, below[key]))
            else:
                left.append((call, training, clock))
        self._calls = left[-CALLS_KEPT:]  # a forward may come before another model's backward
        if kept:
            self._pending.append((step, params, kept))

    def stepping(self, optimizer) -> None:
        """Optimizer listener: the backward calls since the last step that gave gradients to
        parameters this step updates were training steps; judge the modes their modules ran
        in."""
        if not self._listening:
            return
        self._stepped = True
        if self._pending:
            updated = {id(param) for group in optimizer.param_groups for param in group["params"]
                       if param.grad is not None}
            for step, params, calls in self._pending:
                self._judge(step, params, _mask(params, updated), calls, optimizer)
        self._steps_left -= 1
        if self._steps_left <= 0:
            self._listen(False)

    def _judge(self, step: int, params: list, updated: int, calls: list, optimizer) -> None:
        """`updated`: the mask of `params` (the parameters the backward call reached) this
        step updates; each call's mask: the parameters whose gradient passed through it."""
        owned = {}  # id(module an eval() call was made on) -> the mask of its parameters
        for call, training, clock, below in calls:
            module = call[0]
            if not below & updated or module.training is not training or not mode_matters(module):
                continue  # not trained by this step; set back before it (for the loss); moot
            if training:
                self._trained[module] = (step, clock)
                continue
            switch, trained = self._switches.get(module), self._trained.get(module)
            if switch is None or trained is None or switch.direct or not switch.evals or \
                    switch.site is None or not trained[1] < switch.clock <= clock:
                continue
            if switch.owner is None:  # set by hand: frozen statistics alone are on purpose
                if isinstance(module, NORMS) and switch.site not in self._unfreezing:
                    continue
                owner = _outermost(call)
            else:
                owner = switch.owner()
            if owner is None:
                continue
            if id(owner) not in owned:
                owned[id(owner)] = _mask(params, {id(param) for param in owner.parameters()})
            if not below & updated & owned[id(owner)]:
                continue  # the step updated none of that module's parameters through it
            site = self._sites.get(switch.site)
            if site is None:
                site = _Site(switch.site, owner, type(optimizer).__name__, switch.owner is None)
                self._sites[switch.site] = site
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
        if site.by_hand:
            return _assigned_finding(site, names, listed, modules, owner, first, trained)
        called = EVAL_CALL.search(site.frame.code)
        call_text = called.group(0) if called else f"train(False) on {owner}"
        receiver = called.group(1) if called else None
        still = all(not module.training for module in modules)
        they = "They" if len(modules) > 1 else "It"
        message = (
            f"This call set {owner} to eval mode, and no train() call set it back before "
            f"training step {first}: that step's forward ran {listed} in eval mode, and "
            f"{site.optimizer}.step() updated parameters of {owner} whose gradients passed "
            f"through {'them' if len(modules) > 1 else 'it'}. {they} had run in train mode in "
            f"earlier training steps (step {trained} among them). {_effects(modules)}"
            + (f" {they} {'were' if len(modules) > 1 else 'was'} still in eval mode when the "
               "run ended." if still else "")
            + f" Call {f'{receiver}.train()' if receiver else f'train() on {owner}'} before "
            "training resumes (once the evaluation it was set for is done, or at the start of "
            "each epoch); to keep a layer frozen on purpose, set that layer itself to eval mode "
            "(bn.eval()).")
        return Finding(
            "left_in_eval_mode", "warning", f"training went on in eval mode after {call_text}",
            message, module=owner, source=str(site.frame), code=site.frame.code or None,
            step=first, details={"modules": names, "owner": owner, "first_step": first,
                                 "train_step": trained, "optimizer": site.optimizer,
                                 "still_in_eval_mode": still})


def _assigned_finding(site: _Site, names: list, listed: str, modules: list, owner: str,
                      first: int, trained: int) -> Finding:
    """The finding of a line that set `training = False` by hand."""
    assigned = ASSIGNED.search(site.frame.code)
    text = assigned.group(0) if assigned else "training = False"
    still = all(not module.training for module in modules)
    plural = len(modules) > 1
    they, them = ("They", "them") if plural else ("It", "it")
    message = (
        f"This line set `training` to False by hand (not through train() or eval()) on "
        f"{listed}; nothing set {them} back before training step {first}: that step's "
        f"forward ran {them} in eval mode, and {site.optimizer}.step() updated parameters "
        f"of {owner} whose gradients passed through {them}. {they} had run in train mode in "
        f"earlier training steps (step {trained} among them). {_effects(modules)}"
        + (f" {they} {'were' if plural else 'was'} still in eval mode when the run ended."
           if still else "")
        + f" Call train() on {owner} (or set `training` back to True) before training "
        "resumes; to freeze normalisation statistics on purpose, set only the norm layers' "
        "`training` to False"
        + ("; to turn dropout off for good, set its p to 0." if any(
            isinstance(module, Dropout) for module in modules) else "."))
    return Finding(
        "left_in_eval_mode", "warning", f"training went on in eval mode after {text}",
        message, module=owner, source=str(site.frame), code=site.frame.code or None,
        step=first, details={"modules": names, "owner": owner, "first_step": first,
                             "train_step": trained, "optimizer": site.optimizer,
                             "still_in_eval_mode": still, "by_hand": True})


def _input_call(call, orders: list, in_graph: dict):
    """For a module call with no ops in the graph (Dropout in eval mode passes its input
    through), the order of the call that made its input, as far as the graph tells: the
    call with ops there that started last before it, in the same model call, outside the
    calls around it; None when there is none (its input reached no parameter)."""
    around, outermost = set(), call
    while outermost[1] is not None:
        outermost = outermost[1]
        around.add(outermost[2])
    for index in range(bisect.bisect_left(orders, call[2]) - 1, -1, -1):
        order = orders[index]
        if order in around:
            continue
        candidate = in_graph[order]
        while candidate[1] is not None:
            candidate = candidate[1]
        return order if candidate is outermost else None
    return None


def _parameters_below(nodes: set) -> tuple:
    """({node: the mask of the parameters its gradient flows on to}, [id of the parameter
    of each bit]) for the nodes a backward call ran (children first, without recursion)."""
    masks, params = {}, []
    for start in nodes:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if not expanded:
                if node not in masks:
                    stack.append((node, True))
                    stack.extend((child, False) for child in node._next_nodes
                                 if child is not None and child in nodes and child not in masks)
                continue
            mask = 0
            if node.__class__ is AccumulateGrad:
                if node.variable is not None:
                    mask = 1 << len(params)
                    params.append(id(node.variable))
            else:
                for child in node._next_nodes:
                    mask |= masks.get(child, 0)
            masks[node] = mask
    return masks, params


def _mask(params: list, ids: set) -> int:
    """The mask of the parameters of `params` whose ids are in `ids`."""
    mask = 0
    for bit, key in enumerate(params):
        if key in ids:
            mask |= 1 << bit
    return mask


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


def _outermost(call):
    """The module of the outermost call around module call `call` (the model it ran in)."""
    while call[1] is not None:
        call = call[1]
    return call[0]


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


def _call_site(module, assigned: bool = False):
    """The script's line that called train()/eval() on `module`: the innermost user frame
    outside the overrides of train() and eval() in its classes. `assigned`: the line that set
    `module.training`, None where an override of train() or eval() set it (that call is
    the script's mode change, heard as such)."""
    location = SourceLocation.capture(max_frames=6)
    if location is None:
        return None
    overrides = [vars(klass)[name].__code__ for klass in type(module).__mro__
                 for name in ("train", "eval")
                 if isinstance(vars(klass).get(name), types.FunctionType) and klass is not Module]
    for frame in location.frames:
        if not any(_in_code(frame, code) for code in overrides):
            return frame
        if assigned:
            return None
    return None


def _in_code(frame, code) -> bool:
    if frame.file != code.co_filename or frame.function != code.co_name:
        return False
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_firstlineno <= frame.line <= max(lines, default=code.co_firstlineno)
