"""The status of each leaf a `ParamWatch` tracks ("ok", "no gradient", "not trained", "zero
gradient", "no effect on the loss", "exploding", "vanishing", "nan", "not measured", "never
trains", "gradient set by hand"), and the rules that decide it from the norm histories.

The rules compare a parameter with its own first steps and with the other parameters,
never with an absolute scale, so small correct problems, and gradients shrinking toward
0 as the loss converges, raise nothing.

- received no gradient: a parameter (given to an optimizer that stepped; where no
  optimizer stepped, of a module whose forward ran with grad enabled) that no backward
  call reached, not even through `genesis.autograd.grad`. Frozen ones (requires_grad
  False) are not tracked. One whose optimizer stepped with a `.grad` all the same
  (set by hand, as Reptile's meta-update or evolution strategies do) is "gradient set by
  hand", plain information.
- gradient always zero: every gradient it got was exactly zero. Not a finding for a module's
  bias whose weight got a non-zero gradient in a backward call that gave the bias its zero
  (`bias` and `weight`; `bias_X` and `weight_X`, as an RNN's `bias_ih_l0` and
  `weight_ih_l0`; `X_bias` and `X_weight`, as attention's `in_proj_bias` and
  `in_proj_weight`): gradient did reach what the bias is added to there, and the bias's
  gradient (that gradient summed over every dimension but the bias's own) cancelled exactly.
  The loss does not change with such a bias, by construction (a WGAN critic's last bias adds
  the same constant to mean(C(fake)) and mean(C(real))): its status is "no effect on the
  loss", plain information. So is a parameter no backward call reached that the loss
  depends on only through a derivative it drops out of (`differentiated_away`: score
  matching's loss is built from dE/dx, which an energy network's last bias does not change).
- exploding: its gradient norm grew at least x1000 (the median of its last 3 readings
  against the median of its first 3 non-zero ones), rose over those last 3, and in each
  of them was above the norm of the weights themselves (grad/weight > 1), while the loss
  did not fall (the median loss of those last 3 steps not below that of the first 3's:
  gradients that grow as the loss falls are a model learning, as when a layer after it
  grows from a zero initialisation). Where the norm overflowed to NaN/Inf, the last 3
  finite readings before it count, whatever the loss did.
- vanishing (tensors of 2 or more dimensions: weight matrices, kernels, embeddings): in
  each of its last 5 readings its grad/weight ratio was at least x1000 below the median
  ratio of the other such parameters in that step, and had fallen at least x1000 from its
  own first readings, while the others' median fell less than x1000 (a converged run is
  not vanishing). A bias (or other 1-D parameter) is vanishing with a weight of its module
  when its own ratio fell as far in those readings.
- never trains: a leaf marked `never_trains`, a parameter of a layer built anew in each
  forward (a finding of `genesis.debug.forward_builds`), whatever its gradients.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from statistics import median

from .norm_history import NormHistory, ratio
from .tracked_leaf import Tracked

__all__ = ["parameter_statuses", "vanishing_facts", "exploding_facts", "weight_beside",
           "unknown_loss", "EXPLODING_GROWTH", "VANISHING_GAP", "EXPLODING_RULE", "VANISHING_RULE",
           "NEVER_TRAINS", "SET_BY_HAND"]

NEVER_TRAINS = "never trains"
SET_BY_HAND = "gradient set by hand"

EXPLODING_GROWTH = 1e3   # growth of the gradient norm since the first readings
EXPLODING_RATIO = 1.0    # grad/weight norm ratio above which a growing gradient outweighs its weights
TREND = 3                # readings per median at either end of the exploding rule
VANISHING_GAP = 1e3      # how far below the other parameters' median ratio
VANISHING_FALL = 1e3     # how far below its own first ratio
VANISHING_WINDOW = 5     # consecutive recent readings the gap must hold in

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


def parameter_statuses(entries, names: dict, steps: int, loss_at) -> dict:
    """Tracked -> "ok", "no gradient", "not trained", "zero gradient", "no effect on the
    loss", "exploding", "vanishing", "nan", "not measured", "never trains" or "gradient set
    by hand" (no backward reached it, but its optimizer stepped with a .grad the script set,
    no finding). "not trained":
    no gradient reached it, and none was expected to (see `_expected`: a DQN's target
    network, a frozen teacher); "no gradient" is a parameter that should have got one, a
    finding. "no effect on the loss": a bias whose gradients cancelled (see `_cancels_out`),
    or a leaf that drops out of the derivative the loss is built from (see the module
    docstring), no finding. "never trains": marked `never_trains` (a finding of forward_builds).
    `entries`: the `Tracked` leaves (a view that can be read more than once), `names`: name
    -> Tracked, `steps`: the backward calls measured, `loss_at(step)`: a step's loss, where
    known."""
    vanishing = vanishing_facts(entries)
    expected = _expected(entries)
    statuses = {}
    for entry in entries:
        if entry.never_trains:
            statuses[entry] = NEVER_TRAINS
            continue
        status = _status(entry, vanishing, steps, loss_at)
        if status == "no gradient" and entry.grad_set_by_hand:
            status = SET_BY_HAND
        elif status == "no gradient" and (entry not in expected or not entry.tensor.requires_grad):
            status = "not trained"
        elif status == "no gradient" and entry.differentiated_away:
            status = "no effect on the loss"
        elif status == "zero gradient" and _cancels_out(entry, names):
            status = "no effect on the loss"
        statuses[entry] = status
    return statuses


def _expected(entries) -> set:
    """Parameters that should get gradients: those given to an optimizer that stepped, or,
    when no optimizer stepped, those of modules whose forward ran with grad enabled."""
    role = "optimizer" if any("optimizer" in entry.roles for entry in entries) else "module"
    return {entry for entry in entries if role in entry.roles}


def _cancels_out(entry: Tracked, names: dict) -> bool:
    """Whether `entry`, whose gradients were all exactly zero, is a module's bias whose
    weight (`weight_beside`) got a non-zero gradient in one of the recent backward calls
    that gave the bias its zero. Each such bias is added to the product of its weight
    with an input (a Linear's or a convolution's output, a norm's scaled values, an RNN's
    gate pre-activations at each time step, attention's packed q, k, v): call that sum
    s. The weight's gradient is s's gradient times that input, summed over the batch (and
    the time steps), so it is not zero only where s's gradient is not; the bias's is s's
    gradient summed over every dimension but its own (and the time steps), so there it
    cancelled, and no blocked flow (dead ReLUs, a product with 0) explains it: the loss
    does not depend on the bias (a WGAN critic's last bias). Another weight of the
    module learning shows nothing of the kind (an RNN's other direction or layer)."""
    weight = names.get(weight_beside(entry.name))
    if entry.rank != 2 or weight is None or weight.rank != 2:
        return False
    return any((weight.history.at(step) or 0.0) > 0.0
               for step, _, _ in entry.history.readings())


def _status(entry: Tracked, vanishing: dict, steps: int, loss_at) -> str:
    if not steps:
        return "not measured"  # no backward call completed
    history = entry.history
    if not history.reached:
        return "no gradient"
    if history.non_finite:  # unless the norm exploded first, then overflowed
        return "exploding" if exploding_facts(history, loss_at) is not None else "nan"
    largest = history.largest
    if largest is None:
        return "ok"  # reached only through autograd.grad: no .grad to read
    if largest == 0.0:
        return "zero gradient"
    if exploding_facts(history, loss_at) is not None:
        return "exploding"
    if entry in vanishing:
        return "vanishing"
    return "ok"


def vanishing_facts(entries) -> dict:
    """Tracked -> the facts that make it vanishing (see the module docstring). Only the
    parameters whose own ratio fell far enough are compared with the others, each step's
    ratios sorted once: a few milliseconds for hundreds of parameters."""
    pool = [entry for entry in entries
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
    _vanishing_with_their_module(entries, found)
    return found


def _vanishing_with_their_module(entries, found: dict) -> None:
    """Biases and other 1-D parameters are judged with their module's weights: one is
    vanishing too when a weight of its module is and its own ratio fell as far."""
    modules = {entry.name.rpartition(".")[0]: facts for entry, facts in found.items()
               if entry.rank == 2 and "." in entry.name}
    for entry in entries:
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


def unknown_loss(step: int) -> None:
    """The loss of `step` where none is known: a `ParamWatch`'s `loss_at` until the session
    tells it."""
    return None


def exploding_facts(history: NormHistory, loss_at=unknown_loss):
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


def weight_beside(name: str) -> str | None:
    """The name of the weight whose product the bias `name` of a module is added to, or None
    where `name` is no such bias (of no module, or not named as one).

    >>> weight_beside("fc.bias"), weight_beside("rnn.bias_hh_l1_reverse")
    ('fc.weight', 'rnn.weight_hh_l1_reverse')
    >>> weight_beside("attn.in_proj_bias"), weight_beside("bias"), weight_beside("fc.biases")
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

