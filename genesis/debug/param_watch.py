"""Per-parameter gradient norms after every backward call, and what they reveal:
parameters that receive no gradient, all-zero, exploding and vanishing gradients.

Each tracked leaf keeps a `NormHistory` (its last 512 steps in full, older ones in
summary bins whose widths double with age: flat memory however long the run) of its
gradient norm and its weight norm after each backward call that reached it.

The rules compare a parameter with its own first steps and with the other parameters,
never with an absolute scale, so small correct problems, and gradients shrinking toward
0 as the loss converges, raise nothing. Each finding states its rule and its numbers.

- received no gradient: a parameter (given to an optimizer that stepped; where no
  optimizer stepped, of a module whose forward ran with grad enabled) that no backward
  call reached, not even through `genesis.autograd.grad`. Frozen ones (requires_grad
  False) are not tracked.
- gradient always zero: every gradient it got was exactly zero. Not a finding for a module's
  bias whose weight got a non-zero gradient in a backward call that gave the bias its zero
  (`bias` and `weight`; `bias_X` and `weight_X`, as an RNN's `bias_ih_l0` and
  `weight_ih_l0`; `X_bias` and `X_weight`, as attention's `in_proj_bias` and
  `in_proj_weight`): gradient did reach what the bias is added to there, and the bias's
  gradient (that gradient summed over every dimension but the bias's own) cancelled exactly.
  The loss does not change with such a bias, by construction (a WGAN critic's last bias adds
  the same constant to mean(C(fake)) and mean(C(real))): its status is "no effect on the
  loss", plain information.
  The finding's explanation pairs the same way: a weight whose own bias learned multiplied
  zeros (its input); with a bias at zero, what it is added to got no gradient (or only
  gradient that cancelled); other parameters of the module learning (an RNN's other
  direction or layer) show only that gradient reaches another part of it.
- exploding: its gradient norm grew at least x1000 (the median of its last 3 readings
  against the median of its first 3 non-zero ones), rose over those last 3, and in each
  of them was above the norm of the weights themselves (grad/weight > 1), while the loss
  did not fall (the median loss of those last 3 steps not below that of the first 3's:
  gradients that grow as the loss falls are a model learning, as when a layer after it
  grows from a zero initialisation). Where the norm overflowed to NaN/Inf, the last 3
  finite readings before it count, whatever the loss did. Parameters whose
  gradients vanished meanwhile (activations saturated by the blow-up) are told inside
  that finding, not as one of their own.
- vanishing (tensors of 2 or more dimensions: weight matrices, kernels, embeddings): in
  each of its last 5 readings its grad/weight ratio was at least x1000 below the median
  ratio of the other such parameters in that step, and had fallen at least x1000 from its
  own first readings, while the others' median fell less than x1000 (a converged run is
  not vanishing). A bias (or other 1-D parameter) is vanishing with a weight of its module
  when its own ratio fell as far in those readings.

>>> import genesis
>>> w = genesis.tensor([3.0, 4.0], requires_grad=True)
>>> watch = ParamWatch()
>>> _ = watch.track("w", w)
>>> (w * 2).sum().backward()
>>> watch.measure()
>>> row, = watch.rows()
>>> row.grad_norm, row.status, row.steps
(2.8284271247461903, 'ok', [0])
"""
from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from statistics import median

import numpy as np

from ._census import SQUARE_SUMS
from ._finite_figures import dot_with_itself
from .findings import Finding
from .norm_history import RECENT, NormHistory, ratio
from .readings import Readings
from .trace import ParameterRow

__all__ = ["ParamWatch", "Tracked", "EXPLODING_GROWTH", "VANISHING_GAP"]

EXPLODING_GROWTH = 1e3   # growth of the gradient norm since the first readings
EXPLODING_RATIO = 1.0    # grad/weight norm ratio above which a growing gradient outweighs its weights
TREND = 3                # readings per median at either end of the exploding rule
VANISHING_GAP = 1e3      # how far below the other parameters' median ratio
VANISHING_FALL = 1e3     # how far below its own first ratio
VANISHING_WINDOW = 5     # consecutive recent readings the gap must hold in
# statuses that are no finding (NaN: told where it was born)
NO_FINDING = ("ok", "nan", "not measured", "not trained", "no effect on the loss")

EXPLODING_RULE = (f"gradient norm grown x{EXPLODING_GROWTH:g} or more (median of the last {TREND} "
                  f"readings against the median of the first {TREND} non-zero ones), rising over "
                  f"the last {TREND}, and above the weight norm (grad/weight > {EXPLODING_RATIO:g}) "
                  "in each of them, while the loss did not fall (median of those steps' losses "
                  "not below the first ones'); where the norm overflowed to NaN/Inf, the finite "
                  "readings before it count, and with too few of them, the first reading against "
                  "the last finite one, rising at every step")
VANISHING_RULE = (f"grad/weight norm ratio x{VANISHING_GAP:g} or more below the median of the other "
                  f"parameters of 2+ dimensions in each of its last {VANISHING_WINDOW} readings, and "
                  f"x{VANISHING_FALL:g} or more below its own first readings, while the others' median "
                  f"fell less than x{VANISHING_FALL:g}")


@dataclass(eq=False)
class Tracked:
    """One tracked leaf: its name in reports (`rank` says how good a name it is: 2 a module
    path, 1 a variable name, 0 a position), the tensor, its history, and why it is expected
    to get gradients (`roles`: "optimizer", "module")."""

    name: str
    tensor: object
    history: NormHistory
    rank: int = 1
    roles: set = field(default_factory=set)
    optimizer: str | None = None   # "SGD (lr=3.0) made at train.py:8", when one was given it
    unregistered: bool = False     # a module's, held in a plain list/dict: not in parameters()

    @property
    def is_parameter(self) -> bool:
        return bool(self.roles) or self.rank == 2


class ParamWatch:
    """Tracks leaves (`track`) and, at each `measure()` (one per backward call), records the
    gradient norm of each leaf the call reached; gradients on a GPU are summed in one launch
    and filled in when `readings` fetches."""

    def __init__(self, readings: Readings | None = None, recent: int = RECENT):
        self.readings = readings if readings is not None else Readings()
        self.recent = recent
        self.tracked = {}   # id(tensor) -> Tracked, in the order first seen
        self.loss_at = _unknown  # step -> its loss, where known (the session tells it)
        self._names = {}    # name -> Tracked
        self.steps = 0

    def track(self, name: str, tensor, rank: int = 1, role: str | None = None) -> Tracked | None:
        """Track `tensor` under `name` (made unique with "#2", "#3"), or give a tracked one a
        better name (higher `rank`) or another role. Tensors that do not require grad are
        not tracked (frozen)."""
        entry = self.tracked.get(id(tensor))
        if entry is None:
            if not tensor.requires_grad:
                return None
            entry = Tracked(self._unique(name), tensor, NormHistory(self.steps, self.recent), rank)
            self.tracked[id(tensor)] = entry
            self._names[entry.name] = entry
        elif rank > entry.rank and name != entry.name:
            del self._names[entry.name]
            entry.name, entry.rank = self._unique(name), rank
            self._names[entry.name] = entry
        if role is not None:
            entry.roles.add(role)
        return entry

    def grad_norm_at(self, tensor, step: int) -> float | None:
        """The norm of `tensor`'s gradient as backward call `step` left it, while that step is
        recent (None: not tracked, no gradient then, or too long ago)."""
        entry = self.tracked.get(id(tensor))
        return entry.history.at(step) if entry is not None and entry.tensor is tensor else None

    def name_of(self, tensor) -> str | None:
        """The name of `tensor` if it is a tracked parameter (a module's, or given to an
        optimizer), else None."""
        entry = self.tracked.get(id(tensor))
        return entry.name if entry is not None and entry.tensor is tensor and entry.is_parameter \
            else None

    def _unique(self, name: str) -> str:
        candidate, number = name, 1
        while candidate in self._names:
            number += 1
            candidate = f"{name}#{number}"
        return candidate

    def measure(self, reached=None, scale: float = 1.0) -> None:
        """Record one step: the norms of the gradients (and weights) of the leaves this
        backward call reached. `reached` holds the autograd nodes the call sent gradient to
        (the engine's `flowed_from`); None counts every leaf with a `.grad` as reached.
        `scale`: the GradScaler scale of the loss backward started from; the norms are
        divided by it, and a NaN/Inf norm under a scale above 1 is an overflow the scaler
        skips (counted in `overflowed`, not a reading)."""
        step = self.steps
        by_device = {}
        for entry in self.tracked.values():
            tensor, history = entry.tensor, entry.history
            history.add(step, None, None)
            grad = tensor._grad
            if reached is None:
                if grad is None:
                    continue
            elif tensor._accumulator is None or tensor._accumulator not in reached:
                continue
            history.reached += 1
            if grad is not None:  # None: reached through autograd.grad, which fills no .grad
                by_device.setdefault(grad._device, []).append((history, grad._data, tensor._data))
        for device, entries in by_device.items():
            if device.xp is np:  # on the host: summed now (nothing to gain from batching)
                for history, grad, weight in entries:
                    history.set(step, math.sqrt(dot_with_itself(np, grad)) / scale,
                                math.sqrt(dot_with_itself(np, weight)), overflow_expected=scale > 1)
                continue

            def record(squares: list, entries=entries) -> None:
                count = len(entries)
                for (history, _, _), grad_total, weight_total in zip(entries, squares, squares[count:]):
                    history.set(step, math.sqrt(grad_total) / scale, math.sqrt(weight_total),
                                overflow_expected=scale > 1)
            xp = device.xp
            arrays = [grad for _, grad, _ in entries] + [weight for _, _, weight in entries]
            self.readings.read(xp, SQUARE_SUMS(device, arrays,
                                               lambda count: self.readings.zeroed(xp, count)),
                               record)
        self.steps += 1

    # -- what the histories say --------------------------------------------------
    def statuses(self) -> dict:
        """Tracked -> "ok", "no gradient", "not trained", "zero gradient", "no effect on the
        loss", "exploding", "vanishing", "nan" or "not measured". "not trained": no gradient
        reached it, and none was expected to (see `_expected`: a DQN's target network, a frozen
        teacher); "no gradient" is a parameter that should have got one, a finding. "no effect
        on the loss": a bias whose gradients cancelled (see `_cancels_out`), no finding."""
        vanishing = self._vanishing()
        expected = self._expected()
        statuses = {}
        for entry in self.tracked.values():
            status = self._status(entry, vanishing)
            if status == "no gradient" and (entry not in expected or not entry.tensor.requires_grad):
                status = "not trained"
            elif status == "zero gradient" and self._cancels_out(entry):
                status = "no effect on the loss"
            statuses[entry] = status
        return statuses

    def _cancels_out(self, entry: Tracked) -> bool:
        """Whether `entry`, whose gradients were all exactly zero, is a module's bias whose
        weight (`_weight_beside`) got a non-zero gradient in one of the recent backward calls
        that gave the bias its zero. Each such bias is added to the product of its weight
        with an input (a Linear's or a convolution's output, a norm's scaled values, an RNN's
        gate pre-activations at each time step, attention's packed q, k, v): call that sum
        s. The weight's gradient is s's gradient times that input, summed over the batch (and
        the time steps), so it is not zero only where s's gradient is not; the bias's is s's
        gradient summed over every dimension but its own (and the time steps), so there it
        cancelled, and no blocked flow (dead ReLUs, a product with 0) explains it: the loss
        does not depend on the bias (a WGAN critic's last bias). Another weight of the
        module learning shows nothing of the kind (an RNN's other direction or layer)."""
        weight = self._names.get(_weight_beside(entry.name))
        if entry.rank != 2 or weight is None or weight.rank != 2:
            return False
        return any((weight.history.at(step) or 0.0) > 0.0
                   for step, _, _ in entry.history.readings())

    def _status(self, entry: Tracked, vanishing: dict) -> str:
        if not self.steps:
            return "not measured"  # no backward call completed
        history = entry.history
        if not history.reached:
            return "no gradient"
        if history.non_finite:  # unless the norm exploded first, then overflowed
            return "exploding" if _exploding(history, self.loss_at) is not None else "nan"
        largest = history.largest
        if largest is None:
            return "ok"  # reached only through autograd.grad: no .grad to read
        if largest == 0.0:
            return "zero gradient"
        if _exploding(history, self.loss_at) is not None:
            return "exploding"
        if entry in vanishing:
            return "vanishing"
        return "ok"

    def rows(self) -> list:
        """The parameter table: one ParameterRow per tracked leaf."""
        rows = []
        for entry, status in self.statuses().items():
            history, tensor = entry.history, entry.tensor
            step, last = history.last()
            rows.append(ParameterRow(entry.name, tuple(tensor.shape), tensor.dtype.name, last, status,
                                     history.grad_norms(), steps=history.steps(),
                                     grad_norm_step=step,
                                     summary=[summary.to_dict() for summary in history.bins()]))
        return rows

    def findings(self, locate, explain=None) -> list:
        """One finding per problem. Parameters without gradient are grouped by module and
        reason; all-zero ones by module; exploding and vanishing ones each in one finding.
        `locate(entry)` gives (source, code, graph, node) to point at; `explain(tensor)`
        (a `genesis.debug.parameter_uses.Explanation`) says why one got no gradient."""
        statuses = self.statuses()
        groups = {}
        for entry, status in statuses.items():
            if status in NO_FINDING:
                continue
            module = (entry.name.rpartition(".")[0] or None) if entry.rank == 2 else None
            if status == "no gradient":
                reason = explain(entry.tensor) if explain is not None else None
                key = (status, module, reason)
            elif status == "zero gradient":
                key = (status, module, None)
            else:
                key = (status, None, None)
            groups.setdefault(key, []).append(entry)
        found = []
        vanishing = self._vanishing()
        # gradients vanishing where others explode: saturated activations after the blow-up,
        # a consequence told inside the exploding finding
        fading = [entry for (status, _, _), entries in groups.items() if status == "vanishing"
                  for entry in entries] if any(key[0] == "exploding" for key in groups) else []
        for (status, module, reason), entries in groups.items():
            if status == "no gradient":
                found.append(self._no_gradient(entries, module, reason, locate))
            elif status == "zero gradient":
                found.append(self._zero_gradient(entries, module, locate))
            elif status == "exploding":
                found.append(self._exploding_finding(entries, locate, fading))
            elif not fading:
                found.append(self._vanishing_finding(entries, vanishing, locate))
        return found

    def _expected(self) -> set:
        """Parameters that should get gradients: those given to an optimizer that stepped, or,
        when no optimizer stepped, those of modules whose forward ran with grad enabled."""
        entries = self.tracked.values()
        role = "optimizer" if any("optimizer" in entry.roles for entry in entries) else "module"
        return {entry for entry in entries if role in entry.roles}

    # -- the findings ----------------------------------------------------------------
    def _no_gradient(self, entries: list, module, reason, locate) -> Finding:
        listed = _listing([entry.name for entry in entries])
        plural = len(entries) > 1
        source, code, graph, node = locate(entries[0])
        if reason is not None and reason.source is not None:
            source, code = str(reason.source), reason.source.code
        calls = f"{self.steps} backward call{'s' if self.steps != 1 else ''}"
        them = "them" if plural else "it"
        title = f"{listed} received no gradient" + (f": {reason.summary(plural)}" if reason else "")
        message = (f"{listed} {'require' if plural else 'requires'} grad and "
                   f"{'are' if plural else 'is'} {self._expectation(entries[0], plural)}, but no "
                   f"gradient reached {them} in {calls}")
        message += f": {reason.describe(plural)}." if reason else "."
        if reason is not None and reason.how == "unused":
            message += (f" No op took {them} as input while the steps were recorded: a layer "
                        "defined but not called in forward, or a parameter the model never uses?")
        elif reason is not None and reason.how == "unrecorded":
            message += (f" {'Their' if plural else 'Its'} model ran only in later backward calls "
                        "than those recorded (genesis trace records the first --steps): trace "
                        "again with --steps covering one of them to see where the path to the "
                        "loss is cut.")
        elif reason is not None and reason.how == "replaced":
            message += (f" The optimizer still updates the old {'ones' if plural else 'one'}, "
                        "which the forward no "
                        "longer uses, while the new module's parameters are in no optimizer: "
                        "build the optimizer after replacing the module (or give it the new "
                        "parameters with add_param_group).")
        elif reason is not None and reason.how == "used":
            message += " Is an output left out of the loss, or a branch not taken?"
        elif reason is not None:
            message += (f" Remove the cut if {'they' if plural else 'it'} should learn; if not, set "
                        "requires_grad=False (or leave it out of the optimizer).")
        return Finding("no_gradient", "warning", title, message, module=module, source=source,
                       code=code, graph=graph, node=node,
                       details={"parameters": [entry.name for entry in entries],
                                "reason": reason.how if reason is not None else None})

    @staticmethod
    def _expectation(entry: Tracked, plural: bool) -> str:
        if "optimizer" in entry.roles:
            return f"given to {entry.optimizer}" if entry.optimizer else "given to an optimizer"
        return ("parameters" if plural else "a parameter") + \
            " of a module whose forward ran with grad enabled"

    def _zero_gradient(self, entries: list, module, locate) -> Finding:
        listed = _listing([entry.name for entry in entries])
        source, code, graph, node = locate(entries[0])
        readings = sum(entry.history.reached for entry in entries)
        message = (f"every gradient {listed} received was exactly zero ({readings} reading"
                   f"{'s' if readings != 1 else ''} in {self.steps} backward calls): "
                   + self._zero_gradient_cause([entry.name for entry in entries], module))
        return Finding("zero_gradient", "warning", f"{listed}: gradient always zero", message,
                       module=module, source=source, code=code, graph=graph, node=node,
                       details={"parameters": [entry.name for entry in entries]})

    def _zero_gradient_cause(self, names: list, module) -> str:
        """Why the parameters `names` of `module` got only zeros, as far as the module's other
        parameters tell. A weight whose own bias (`_weight_beside`) learned multiplied zeros:
        gradient reached the sum of its product and that bias. A bias whose own weight learned
        got its zeros in other backward calls than the weight's. The other parameters of the
        module learning (an RNN's other direction or layer) shows only that gradient reaches
        part of the module; where `names` hold a bias, the gradient of the sum it is added to
        summed to zero."""
        siblings = [entry for entry in self.tracked.values() if module is not None
                    and entry.rank == 2 and entry.name.rpartition(".")[0] == module]
        learning = [entry.name for entry in siblings
                    if entry.name not in names and (entry.history.largest or 0.0) > 0.0]
        if not learning:
            return ("no gradient flows back through its output (e.g. all the ReLUs after "
                    "it are dead, or its output is multiplied by 0), or what flows back "
                    "cancels exactly (e.g. the loss subtracts two uses of the module on the "
                    "same input, f(x) - f(x)), or, for a weight, its input is all zeros "
                    "(e.g. the ReLUs before it are dead)")
        bias_of = {_weight_beside(entry.name): entry.name for entry in siblings}
        fed_zeros = [name for name in names if bias_of.get(name) in learning]
        apart = [name for name in names if _weight_beside(name) in learning]
        rest = [name for name in names if name not in fed_zeros and name not in apart]
        said = []
        if fed_zeros:
            what = ("what it multiplies was" if fed_zeros == names else
                    f"what {_listing(fed_zeros)} {_verb(fed_zeros, 'multiplies', 'multiply')} "
                    f"{_verb(fed_zeros, 'was', 'were')}")
            said.append(f"{_listing([bias_of[name] for name in fed_zeros])} of the same module "
                        f"did get non-zero gradients, so gradient does reach the module: {what} "
                        "all zeros (for a Linear or a convolution, its input: are the units of "
                        "the layer before it dead?)")
        if apart:
            said.append(f"{_listing([_weight_beside(name) for name in apart])} of the same "
                        "module did get non-zero gradients, but in none of the recent backward "
                        f"calls that gave {_listing(apart)} {_verb(apart, 'its', 'their')} "
                        "zeros: in those, no gradient flowed back through what "
                        f"{_verb(apart, 'it is', 'they are')} added to, or what flowed "
                        "cancelled out")
        if rest:
            said.append(self._unpaired_zero_cause(rest, learning if not said else []))
        return "; ".join(said)

    @staticmethod
    def _unpaired_zero_cause(names: list, learning: list) -> str:
        """`_zero_gradient_cause` for parameters whose own weight or bias got only zeros too
        (or has none), while `learning` (other parameters of the module) got gradients."""
        said = (f"{_listing(learning)} of the same module did get non-zero gradients, so "
                "gradient reaches another part of the module; " if learning else "")
        biases = [name for name in names if _weight_beside(name) is not None]
        bare = [name for name in names if _weight_beside(name) is None
                and not any(_weight_beside(bias) == name for bias in biases)]
        if biases:
            said += (f"with {_listing(biases)} at zero, the gradient reaching what "
                     f"{_verb(biases, 'it is', 'they are')} added to summed to exactly zero in "
                     "every backward call: no gradient flows back there (e.g. all the ReLUs "
                     "after that are dead, or that part of the module's output is multiplied by 0 "
                     "or left out of the loss), or what flows back cancels exactly")
        if bare:
            said += ("; " if biases else "") + (
                f"{_listing(bare)} {_verb(bare, 'has', 'have')} no bias beside "
                f"{_verb(bare, 'it', 'them')} to tell more: no gradient flows back through "
                f"{_verb(bare, 'its', 'their')} product, or what flows back cancels exactly, "
                f"or what {_verb(bare, 'it multiplies', 'they multiply')} was all zeros")
        return said

    def _exploding_finding(self, entries: list, locate, fading: list = ()) -> Finding:
        """`fading`: parameters whose gradients vanished meanwhile, told inside."""
        evidence = {entry: _exploding(entry.history, self.loss_at) for entry in entries}
        worst = max(entries, key=lambda entry: evidence[entry]["growth"])
        facts = evidence[worst]
        source, code, graph, node = locate(worst)
        listed = _listing([entry.name for entry in entries])
        steps = len(facts["recent_steps"])
        message = (f"the gradient norm of {worst.name} rose from {facts['early']:.3g} ("
                   f"{_at(facts['early_steps'])}) to {facts['recent']:.3g} ("
                   f"{_at(facts['recent_steps'])}), x{facts['growth']:.3g}, and was "
                   f"{_range(facts['ratios'])} times the norm of its weights "
                   f"{'in those last ' + str(steps) + ' steps' if steps > 1 else 'then'}. "
                   f"Rule: {EXPLODING_RULE}. ")
        overflow = facts.get("non_finite_from")
        if overflow is not None:
            message += (f"From step {overflow} on it was NaN/Inf: the growth overflowed (where "
                        "the first NaN/Inf was born is reported on its own). ")
        if worst.optimizer:
            message += f"It is updated by {worst.optimizer}. "
        message += ("Lower the learning rate, clip gradients (genesis.nn.utils.clip_grad_norm_) "
                    "or check the initialisation.")
        if fading:
            message += (f" Meanwhile the gradients of {_listing([entry.name for entry in fading])} "
                        "vanished (saturated activations after the blow-up, a consequence: not "
                        "reported separately).")
        return Finding("exploding_gradient", "warning", f"gradient norms exploding ({listed})",
                       message, source=source, code=code, graph=graph, node=node,
                       details={"parameters": [entry.name for entry in entries],
                                "rule": EXPLODING_RULE,
                                "evidence": [{"name": entry.name, **evidence[entry]}
                                             for entry in entries],
                                "then_vanishing": [entry.name for entry in fading]})

    def _vanishing_finding(self, entries: list, vanishing: dict, locate) -> Finding:
        worst = min(entries, key=lambda entry: vanishing[entry]["gap"])
        facts = vanishing[worst]
        source, code, graph, node = locate(worst)
        listed = _listing([entry.name for entry in entries])
        plural = len(entries) > 1
        message = (f"the grad/weight norm ratio of {worst.name} fell from {facts['early']:.3g} "
                   f"(median of steps {_span(facts['early_steps'])}) to {_range(facts['ratios'])} "
                   f"in steps {_span(facts['recent_steps'])}, where the other parameters' median "
                   f"was {_range(facts['others'])}. Rule: {VANISHING_RULE}. "
                   f"{'They barely learn' if plural else 'It barely learns'}: saturating "
                   "activations (sigmoid, tanh), dead ReLUs, or a deep stack without "
                   "normalisation or residual connections.")
        return Finding("vanishing_gradient", "warning", f"gradients vanishing ({listed})", message,
                       source=source, code=code, graph=graph, node=node,
                       details={"parameters": [entry.name for entry in entries],
                                "rule": VANISHING_RULE,
                                "evidence": [{"name": entry.name, **vanishing[entry]}
                                             for entry in entries]})

    # -- the rules ---------------------------------------------------------------------
    def _vanishing(self) -> dict:
        """Tracked -> the facts that make it vanishing (see the module docstring). Only the
        parameters whose own ratio fell far enough are compared with the others, each step's
        ratios sorted once: a few milliseconds for hundreds of parameters."""
        pool = [entry for entry in self.tracked.values()
                if entry.tensor.ndim >= 2 and entry.history.reached]
        parameters = [entry for entry in pool if entry.is_parameter]
        pool = parameters or pool
        if len(pool) < 2:
            return {}
        early = {entry: _early_ratio(entry.history) for entry in pool}
        fallen = []
        for entry in pool:
            history, first = entry.history, early[entry]
            readings = history.readings(VANISHING_WINDOW)
            if len(readings) < VANISHING_WINDOW or first is None or \
                    readings[0][0] <= history.early[-1][0]:
                continue
            ratios = [ratio(grad, weight) for _, grad, weight in readings]
            if any(value is None or math.isnan(value) for value in ratios) or \
                    median(ratios) * VANISHING_FALL > first:
                continue
            fallen.append((entry, readings, ratios))
        if not fallen:
            return {}
        by_step = {}  # step -> the pool's ratios that step, sorted

        def sorted_at(step: int) -> list:
            if step not in by_step:
                values = (entry.history.ratio_at(step) for entry in pool)
                by_step[step] = sorted(value for value in values
                                       if value is not None and not math.isnan(value))
            return by_step[step]

        firsts = sorted(value for value in early.values() if value is not None)
        found = {}
        for entry, readings, ratios in fallen:
            others = [_median_without(sorted_at(step), value)
                      for (step, _, _), value in zip(readings, ratios)]
            if any(other is None or value * VANISHING_GAP > other
                   for value, other in zip(ratios, others)):
                continue
            others_first = _median_without(firsts, early[entry])
            if others_first is None or median(others) * VANISHING_FALL <= others_first:
                continue  # the others fell as far: the run converged
            history = entry.history
            found[entry] = {"early": early[entry],
                            "early_steps": [step for step, _, _ in history.early],
                            "ratios": ratios, "recent_steps": [step for step, _, _ in readings],
                            "others": others, "gap": min(value / other if other else 0.0
                                                         for value, other in zip(ratios, others))}
        self._vanishing_with_their_module(found)
        return found

    def _vanishing_with_their_module(self, found: dict) -> None:
        """Biases and other 1-D parameters are judged with their module's weights: one is
        vanishing too when a weight of its module is and its own ratio fell as far."""
        modules = {entry.name.rpartition(".")[0]: facts for entry, facts in found.items()
                   if entry.rank == 2 and "." in entry.name}
        for entry in self.tracked.values():
            facts = modules.get(entry.name.rpartition(".")[0]) if entry.rank == 2 else None
            if facts is None or entry in found or entry.tensor.ndim >= 2:
                continue
            history = entry.history
            first = _early_ratio(history)
            readings = history.readings(VANISHING_WINDOW)
            if first is None or len(readings) < VANISHING_WINDOW or \
                    readings[0][0] <= history.early[-1][0]:
                continue
            ratios = [ratio(grad, weight) for _, grad, weight in readings]
            if any(value is None or math.isnan(value) or value * VANISHING_FALL > first
                   for value in ratios):
                continue
            found[entry] = {**facts, "early": first,
                            "early_steps": [step for step, _, _ in history.early],
                            "ratios": ratios, "recent_steps": [step for step, _, _ in readings]}


def _median_without(values: list, value: float):
    """The median of the sorted list `values` with one occurrence of `value` left out (None
    when nothing is left)."""
    count = len(values) - 1
    if count < 1:
        return None
    skipped = bisect_left(values, value)

    def at(position: int) -> float:
        return values[position if position < skipped else position + 1]
    return (at((count - 1) // 2) + at(count // 2)) / 2


def _early_ratio(history: NormHistory):
    """The median grad/weight ratio of the first non-zero readings, or None."""
    values = [ratio(grad, weight) for _, grad, weight in history.early if weight is not None]
    return median(values) if len(values) == NormHistory.EARLY else None


def _unknown(step: int) -> None:
    return None


def _exploding(history: NormHistory, loss_at=_unknown):
    """The facts that make a history exploding (see the module docstring), or None;
    `loss_at(step)` is the loss of a step, where known. Where the norm became NaN/Inf, the
    rule is applied to the finite readings before the first such one (`non_finite_from`
    gives its step); with fewer than the rule needs, the first reading against the last
    finite one, rising at every step (an overflow within a few steps)."""
    readings = history.readings() if history.non_finite else history.readings(TREND)
    overflow = next((index for index, (_, grad, _) in enumerate(readings)
                     if not math.isfinite(grad)), None)
    if overflow is None:
        facts = _grown(history.early, readings[-TREND:])
        if facts is not None and _loss_fell(loss_at, facts["early_steps"], facts["recent_steps"]):
            return None  # growing as the model learns
        return facts
    before = readings[:overflow]
    early = [reading for reading in history.early if reading[0] < readings[overflow][0]]
    facts = _grown(early, before[-TREND:])
    if facts is None and early and len(before) >= 2:
        grads = [grad for _, grad, _ in before]
        if all(later > earlier for earlier, later in zip(grads, grads[1:])):
            facts = _grown(early[:1], before[-1:])
    if facts is not None:
        facts["non_finite_from"] = readings[overflow][0]
    return facts


def _loss_fell(loss_at, early_steps: list, recent_steps: list) -> bool:
    """Whether the median loss of `recent_steps` is below that of `early_steps` (False where
    a loss is unknown or not finite)."""
    early = [loss_at(step) for step in early_steps]
    recent = [loss_at(step) for step in recent_steps]
    if any(value is None or not math.isfinite(value) for value in early + recent):
        return False
    return median(recent) < median(early)


def _grown(early: list, recent: list):
    """The exploding rule on (step, grad, weight) readings: the median of `recent` x1000 or
    more above the median of `early`, rising, and above the weight norm in each of `recent`;
    at least TREND of each (or one each, for an overflow), `recent` after `early`."""
    needed = TREND if len(early) > 1 or len(recent) > 1 else 1
    if len(early) < needed or len(recent) < needed or recent[0][0] <= early[-1][0]:
        return None
    grads = [grad for _, grad, _ in recent]
    if any(grad <= 0 or not math.isfinite(grad) for grad in grads) or \
            (len(grads) > 1 and grads[-1] <= grads[0]):
        return None
    start, now = median(grad for _, grad, _ in early), median(grads)
    if now < EXPLODING_GROWTH * start:
        return None
    ratios = [ratio(grad, weight) for _, grad, weight in recent]
    if any(value is None or value <= EXPLODING_RATIO for value in ratios):
        return None
    return {"early": start, "early_steps": [step for step, _, _ in early], "recent": now,
            "recent_steps": [step for step, _, _ in recent], "growth": now / start,
            "ratios": ratios}


def _at(steps: list) -> str:
    """ "median of steps 0-2", or "step 0" for one."""
    return f"median of steps {_span(steps)}" if len(steps) > 1 else f"step {steps[0]}"


def _span(steps: list) -> str:
    return f"{steps[0]}-{steps[-1]}" if len(steps) > 1 else str(steps[0])


def _range(values: list) -> str:
    low, high = min(values), max(values)
    return f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g} to {high:.3g}"


def _weight_beside(name: str) -> str | None:
    """The name of the weight whose product the bias `name` of a module is added to, or None
    where `name` is no such bias (of no module, or not named as one).

    >>> _weight_beside("fc.bias"), _weight_beside("rnn.bias_hh_l1_reverse")
    ('fc.weight', 'rnn.weight_hh_l1_reverse')
    >>> _weight_beside("attn.in_proj_bias"), _weight_beside("bias"), _weight_beside("fc.biases")
    ('attn.in_proj_weight', None, None)
    """
    module, _, attribute = name.rpartition(".")
    if not module:
        return None
    if attribute == "bias":
        return f"{module}.weight"
    if attribute.startswith("bias_"):
        return f"{module}.weight_{attribute[len('bias_'):]}"
    if attribute.endswith("_bias"):
        return f"{module}.{attribute[:-len('_bias')]}_weight"
    return None


def _verb(names: list, one: str, several: str) -> str:
    """`one` for a single name, else `several` (a verb or pronoun agreeing with a listing)."""
    return one if len(names) == 1 else several


def _listing(names: list) -> str:
    if len(names) == 1:
        return names[0]
    shown = names[:4]
    rest = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    if rest:
        return ", ".join(shown) + rest
    return ", ".join(shown[:-1]) + f" and {shown[-1]}"
