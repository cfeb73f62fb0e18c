"""The findings of an `OptimizerWatch`, and their wording: each says what happened, with
its numbers, and what to change, at a line of the script (the `step()` call, the call that
cleared the gradients, the scheduler's `step()`, or where the optimizer was built).

gradient_accumulation, step_without_backward, gradients_cleared and scheduler_order are
judged as the steps happen (their rules are in `genesis.debug.optimizer_watch`); these are
judged here, at the end, from what the watch measured:

- not_updated: an optimizer that stepped while every parameter it holds was frozen
  (requires_grad=False); or a parameter that had a gradient at 3 or more measured steps, a gradient at
  least 1/1000 of its weights' norm (a smaller one may vanish in rounding: a softmax bias
  gets ~1e-9), and that no step of its optimizer ever changed (lr 0, say). Only steps the
  watch samples are measured: where its group's learning rate was higher at some other
  step than at every measured one (an lr of 0 raised later, to unfreeze it), that step may
  have changed it, and there is no finding.
- not_optimized: a module's parameter that received gradients in 2 or more backward
  calls, that no optimizer holds while some optimizer stepped twice or more, once at least
  after its first gradient (gradients taken once training is over, as for a saliency map of
  a reloaded model, are no finding), and whose values never changed (so nothing updates it
  by hand either). When parameters an
  optimizer holds got their last gradient before these got their first (a model made anew
  after its optimizer), the finding names them and says so.
- update_ratio: among the parameters of 2 or more dimensions of one parameter group
  (3 or more of them), one whose median update ratio |Δw|/|w| over the measured steps
  is `RATIO_GAP` times above or below the median of the others (too high: unstable; too
  low: not learning). Groups with different learning rates on purpose are not compared, nor
  are parameters that were all zeros at a measured step (zero-initialised by design, as the
  last layer of a residual branch in Fixup or adaLN-Zero, or LoRA's B: grown from nothing,
  their ratio at step k is about 1/k whatever the learning rate) or whose gradient was all
  zeros at one where others' was not (the layers behind such a zero layer, LoRA's A: their
  gradients stay small until it grows, by design too); either would skew the median the
  others are judged against. The
  ratio judged is taken on the rows (along dim 0) the step's gradient reached: an embedding
  table, where a batch updates only the rows it looked up, moves little as a whole by nature
  (the whole tensor's ratio is what the pictures show).
"""
from __future__ import annotations

import math
from statistics import median

from .findings import Finding
from .parameter_uses import short_path
from .watched_optimizer import WatchedOptimizer

__all__ = ["optimizer_findings", "source_text", "RATIO_GAP"]

RATIO_GAP = 1e3        # how far one parameter's update ratio is from the others' median
MEASURED_AT_LEAST = 3  # measured steps before a parameter's updates are judged


def optimizer_findings(watch, params) -> list:
    """The findings of `watch` (an `OptimizerWatch`; see the module docstrings); `params` is
    the session's `ParamWatch` (for not_optimized), or None."""
    found = []
    for entry in watch.watched.values():
        found.extend(_accumulation_finding(entry))
        found.extend(_repeated_finding(entry))
        found.extend(_cleared_finding(entry))
    found.extend(_scheduler_finding(watch))
    found.extend(_not_updated_findings(watch))
    found.extend(_ratio_findings(watch))
    if params is not None:
        found.extend(_not_optimized_findings(watch, params))
    return found


def _accumulation_finding(entry: WatchedOptimizer) -> list:
    """Located at the step() call after which nothing cleared the gradients, where that
    call is not the one that then stepped with them (zero_grad() forgotten in one branch
    only), else at the step() call that stepped with them."""
    if not entry.stale:
        return []
    step, source, names, before = entry.stale[0]
    elsewhere = before is not None and source is not None and \
        (before.file, before.line) != (source.file, source.line)
    carried = (f" They were left by the {entry.name}.step() call at "
               f"{_line_words(before, source)}, which no zero_grad() followed, and applied "
               f"again by the one at {_line_words(source, before)}." if elsewhere else "")
    message = (
        f"At step {step}, {_listing(names)} entered {entry.name}.step() with gradients summed "
        f"over backward calls from before its previous step: nothing set .grad to None or "
        f"to zeros between the two steps (no optimizer.zero_grad() or model.zero_grad()).{carried} "
        f"It happened at {len(entry.stale)} of {entry.steps} "
        f"step{'s' if entry.steps != 1 else ''}. Every step then applies "
        "the sum of all the gradients so far, not this batch's. Call optimizer.zero_grad() "
        "before loss.backward() in each iteration; to accumulate over k batches on purpose, "
        "call step() and zero_grad() together once every k backward calls.")
    return [Finding("gradient_accumulation", "error",
                    f"gradients accumulate across {entry.name}.step() calls: nothing clears them",
                    message, **_at_step_call(entry, before if elsewhere else source, step),
                    details={"steps_affected": len(entry.stale), "steps": entry.steps,
                             "parameters": names,
                             **({"step_call": source_text(source)} if elsewhere else {})})]


def _repeated_finding(entry: WatchedOptimizer) -> list:
    if not entry.repeated:
        return []
    step, source = entry.repeated[0]
    when = f"At step {step}" if step >= 0 else "Before any backward call"
    return [Finding(
        "step_without_backward", "error",
        f"{entry.name}.step() with no backward call since its previous step",
        f"{when}, {entry.name}.step() ran again with no backward call since its "
        f"previous step ({len(entry.repeated)} time(s) in the run): the parameters are "
        "updated again with the same, old gradients. Call loss.backward() before each "
        "optimizer.step(), once per step() (is step() in the wrong loop, or called twice?).",
        **_at_step_call(entry, source, step if step >= 0 else None),
        details={"times": len(entry.repeated)})]


def _cleared_finding(entry: WatchedOptimizer) -> list:
    """Located at the call that cleared every gradient where one did (and its line is
    known), else at the step() call; the message says how each gradient was cleared."""
    if not entry.cleared:
        return []
    step, source, names, clearings = entry.cleared[0]
    title = f"{entry.name}.step() ran after its gradients were cleared"
    opening = f"At step {step}, backward gave {_listing(names)} gradients, but "
    applied = (f", so the step applied none of them (it happened at {len(entry.cleared)} of "
               f"{entry.steps} step{'s' if entry.steps != 1 else ''}). ")
    fixes = " ".join(dict.fromkeys(_FIXES[call or how] for call, _, how, _ in clearings))
    call, location, how, _ = clearings[0]
    if len(clearings) == 1 and location is not None:
        message = (f"{opening}this {call}() call set every one of them to {how} between the "
                   f"backward call and {entry.name}.step() ({_line_words(source, location)})"
                   f"{applied}{fixes}")
        return [Finding("gradients_cleared", "error", title, message, function=call,
                        source=source_text(location), code=location.code, step=step,
                        details={"steps_affected": len(entry.cleared), "steps": entry.steps,
                                 "parameters": names, "step_call": source_text(source)})]
    told = "; ".join(_clearing_words(*clearing, source, every=len(clearings) == 1)
                     for clearing in clearings)
    return _steps_finding(entry, [found[:3] for found in entry.cleared], "gradients_cleared",
                          title, f"{opening}before {entry.name}.step() {told}{applied}{fixes}")


def _scheduler_finding(watch) -> list:
    if not watch.scheduler_early:
        return []
    scheduler, optimizer, source, step = watch.scheduler_early[0]
    return [Finding(
        "scheduler_order", "warning",
        f"{scheduler}.step() called before {optimizer}.step()",
        f"{scheduler}.step() ran before {optimizer} had taken any step, so the first value "
        "of the learning-rate schedule is skipped (since PyTorch 1.1 the order is "
        "optimizer.step() then scheduler.step()). Call scheduler.step() after "
        "optimizer.step() (at the end of the iteration, or of the epoch).",
        function=f"{scheduler}.step", source=source_text(source),
        code=source.code if source is not None else None, step=max(step, 0),
        details={"scheduler": scheduler, "optimizer": optimizer})]


def _not_updated_findings(watch) -> list:
    found = []
    for entry in watch.watched.values():
        if entry.inside is not None:
            continue  # judged as the wrapper that steps it, which holds the same groups
        params = list(entry.params())
        # frozen now, and no step had a gradient to apply (a model trained, then frozen
        # for analysis or as a teacher, is no finding)
        if entry.steps and params and not entry.steps_with_gradients and \
                not any(param.requires_grad for param in params):
            found.append(Finding(
                "not_updated", "error", f"{entry.name} holds only frozen parameters",
                f"Every parameter {entry.made_words()} holds has requires_grad=False, so none "
                f"gets a gradient and its {entry.steps} step{'s' if entry.steps != 1 else ''} "
                "changed nothing. Were they "
                "frozen by mistake (requires_grad_(False) on the whole model, or the optimizer "
                "built after freezing the wrong part)?",
                **_built_at(entry),
                details={"parameters": [watch.param_name(param) for param in params][:20],
                         "frozen": True}))
            continue
        for index, group in enumerate(entry.optimizer.param_groups):
            names = [watch.param_name(param) for param in group["params"]]
            top = entry.top_lr[index] if index < len(entry.top_lr) else None
            frozen = [name for name in names if name in watch.moved
                      and watch.moved[name][0] >= MEASURED_AT_LEAST and watch.moved[name][1] == 0
                      and (top is None or top <= watch.measured_lr.get(name, 0.0))]
            if not frozen:
                continue
            lr = group.get("lr")
            why = "its group's learning rate is 0" if lr == 0 else \
                f"its group's learning rate is {lr!r}"
            found.append(Finding(
                "not_updated", "error",
                f"{entry.name} never changes {_listing(frozen)}",
                f"{_listing(frozen)} had gradients at {watch.moved[frozen[0]][0]} measured steps "
                "(each at least 1/1000 of the weights' norm), "
                f"and no step of {entry.made_words()} changed {'them' if len(frozen) > 1 else 'it'}"
                f" ({why}; param_groups[{index}]). Give the group a learning rate above 0, or "
                "leave these parameters out of the optimizer (and set requires_grad=False) if "
                "they are meant to stay fixed.",
                **_built_at(entry),
                details={"parameters": frozen, "lr": lr, "group": index}))
    return found


def _ratio_findings(watch) -> list:
    found = []
    for entry in watch.watched.values():
        if entry.inside is not None:
            continue
        for group in entry.optimizer.param_groups:
            medians = {}
            gated = _gated(watch, [watch.param_name(param) for param in group["params"]])
            for param in group["params"]:
                name = watch.param_name(param)
                series = watch.reached_ratios.get(name)
                if param.dim() < 2 or series is None or name in watch.grown_from_zero \
                        or name in gated:
                    continue
                values = [value for _, value in series.values()
                          if value is not None and math.isfinite(value) and value > 0]
                if len(values) >= MEASURED_AT_LEAST:
                    medians[name] = median(values)
            if len(medians) < 3:
                continue
            for name, value in medians.items():
                others = median([other for key, other in medians.items() if key != name])
                if others <= 0:
                    continue
                if value >= others * RATIO_GAP or value <= others / RATIO_GAP:
                    found.append(_ratio_finding(watch, entry, name, value, others))
    return found


def _gated(watch, names: list) -> set:
    """Those of `names` whose gradient was all zeros at a measured step where another's was
    not: behind a layer that was zero then (at steps where all were zero, a hinge loss was
    satisfied, say)."""
    silent = {name: watch.silent_steps.get(name, set()) for name in names}
    everyone = set.intersection(*silent.values()) if silent else set()
    return {name for name, steps in silent.items() if steps - everyone}


def _ratio_finding(watch, entry: WatchedOptimizer, name: str, value: float,
                   others: float) -> Finding:
    high = value > others
    return Finding(
        "update_ratio", "warning",
        f"{name} is updated {'far more' if high else 'far less'} than the other parameters",
        f"Its median update ratio |Δw|/|w| per {entry.name} step is {value:.3g}, against "
        f"{others:.3g} for the other weight matrices of its parameter group (x{RATIO_GAP:g} or "
        "more apart, over the measured steps"
        + (f"; taken on the rows its gradient reached, as it left rows out at "
           f"{watch.rows_left_out[name]} of those steps). " if name in watch.rows_left_out
           else "). ")
        + ("Updates this large relative to the weights make training unstable: lower its "
           "learning rate, or check its initialisation (weights near 0?)." if high else
           "Updates this small relative to the weights mean it is not learning: check its "
           "initialisation (weights far too large?) or whether its gradient is scaled down."),
        **_built_at(entry),
        details={"parameter": name, "ratio": value, "others": others})


def _not_optimized_findings(watch, params) -> list:
    if not any(entry.steps >= 2 for entry in watch.watched.values()):
        return []
    held = {id(param) for entry in watch.watched.values() for param in entry.params()}
    missing, unregistered, since, tensors = [], [], None, []
    last_step_call = max(entry.last_step_call or 0 for entry in watch.watched.values())
    for key, tracked in params.tracked.items():
        if key in held or not tracked.is_parameter:
            continue
        readings = tracked.history.readings()
        weights = {weight for _, grad, weight in readings if grad}
        if len([1 for _, grad, _ in readings if grad]) >= 2 and len(weights) == 1 and \
                last_step_call > readings[0][0]:  # (calls counted at a step: its step + 1)
            missing.append(tracked.name)
            tensors.append(tracked.tensor)
            since = readings[0][0] if since is None else min(since, readings[0][0])
            if tracked.unregistered:
                unregistered.append(tracked.name)
    if not missing:
        return []
    fix = ("Pass all the model's parameters to the optimizer (model.parameters(), or add a "
           "parameter group for the module that was left out)")
    left, holders = _left_behind(watch, params, since)
    made = _made_after_the_optimizers(watch, tensors)
    if made is not None and not left:
        fix = (f"{'It was' if len(missing) == 1 else 'They were'} made at "
               f"{short_path(made.file)}:{made.line}, after the optimizer was built: build the "
               f"optimizer once the model is complete (or give {'it' if len(missing) == 1 else 'them'} "
               "to it with add_param_group)")
    if left:
        fix = (f"{_listing(left)}, which {' and '.join(holders)} "
               f"hold{'s' if len(holders) == 1 else ''}, "
               f"got no gradient from any backward call since step {since}, when these were "
               "first reached: the model (or these layers) was made anew after the optimizer "
               "was built" + (f" (the new ones at {short_path(made.file)}:{made.line})"
                              if made is not None else "")
               + ", and the optimizer still holds the old tensors. Build the "
               "optimizer from the new model's parameters (to resume a run, then load its "
               "state_dict)")
    if unregistered:
        whose = ("It belongs" if len(missing) == 1 else "They belong") \
            if len(unregistered) == len(missing) else f"{_listing(unregistered)} belong"
        fix = (f"{whose} to modules held in a plain list, tuple or dict attribute, which "
               "nn.Module does not register: model.parameters() leaves them out. Hold them "
               "in nn.ModuleList or nn.ModuleDict"
               + ("" if len(unregistered) == len(missing) else
                  "; pass the others to the optimizer too"))
    held_by = "; ".join(entry.made_words() for entry in watch.watched.values())
    first = next(iter(watch.watched.values()))
    located = _built_at(first) if made is None else \
        {"function": first.name, "source": source_text(made), "code": made.code}
    return [Finding(
        "not_optimized", "error",
        f"{_listing(missing)} get{'s' if len(missing) == 1 else ''} gradients but no "
        "optimizer updates them",
        f"{_listing(missing)} received gradients, but no optimizer holds "
        f"{'it' if len(missing) == 1 else 'them'} ({held_by}) and "
        f"{'its' if len(missing) == 1 else 'their'} values never changed: "
        f"{'it stays' if len(missing) == 1 else 'they stay'} as initialised. {fix}; if "
        "they are meant to stay fixed, set requires_grad=False.",
        **located,
        details={"parameters": missing})]


def _made_after_the_optimizers(watch, tensors: list):
    """The SourceLocation that made the first of `tensors`, if each was made after every
    optimizer was built (a layer replaced, or weights loaded with `assign=True`, after the
    optimizer took the old ones); else None."""
    built = [entry.made_order for entry in watch.watched.values()]
    births = [watch.births.of(tensor) for tensor in tensors]
    if not births or None in built or any(order is None or site is None or order < max(built)
                                          for site, order in births):
        return None
    return min(births, key=lambda birth: birth[1])[0]


def _left_behind(watch, params, since: int) -> tuple:
    """([names], [optimizer names]) of the parameters the optimizers hold whose last gradient
    came before step `since`, and of the optimizers holding them: those of a model replaced
    then, if the backward calls go on without them."""
    left, holders = [], []
    for entry in watch.watched.values():
        for param in entry.params():
            tracked = params.tracked.get(id(param))
            if tracked is not None and tracked.tensor is param:
                step, _ = tracked.history.last()
                if step is not None and step < since:
                    left.append(tracked.name)
                    if entry.name not in holders:
                        holders.append(entry.name)
    return left, holders


def _built_at(entry: WatchedOptimizer) -> dict:
    """A finding's op, line and code: the optimizer, where it was built (a wrapper never
    built itself: where the optimizer it wraps was)."""
    made = entry.made_at if entry.made_at is not None or entry.wraps is None else entry.wraps.made_at
    return {"function": entry.name, "source": source_text(made),
            "code": made.code if made is not None else None}


def _steps_finding(entry: WatchedOptimizer, found: list, kind: str, title: str,
                   message: str) -> list:
    """The finding of the steps `found` ((step, source, [parameter names]) each) of `entry`,
    located at the first of them."""
    step, source, names = found[0]
    return [Finding(kind, "error", title, message, **_at_step_call(entry, source, step),
                    details={"steps_affected": len(found), "steps": entry.steps,
                             "parameters": names})]


def _at_step_call(entry: WatchedOptimizer, source, step: int | None) -> dict:
    """A finding's op, line, code and step: a `step()` call of the optimizer, at `source`."""
    return {"function": f"{entry.name}.step", "source": source_text(source),
            "code": source.code if source is not None else None, "step": step}


_FIXES = {  # what to do, by the call that cleared the gradients, else by what they became
    "zero_grad": "Call zero_grad() before loss.backward() (or after step()), not between the two.",
    "clip_grad_value_": "clip_grad_value_ with clip_value 0 clamps every gradient to 0: pass "
                        "the bound meant.",
    "clip_grad_norm_": "clip_grad_norm_ with max_norm 0 scales every gradient to 0: pass the "
                       "norm meant.",
    "None": "Find what sets .grad to None between loss.backward() and optimizer.step() "
            "(p.grad = None, say): clear gradients before loss.backward() or after step().",
    "zeros": "Find what sets .grad to zeros between loss.backward() and optimizer.step() "
             "(p.grad.zero_() or p.grad.mul_(0), say).",
}


def _clearing_words(call: str | None, location, how: str, names: list, step_call,
                    every: bool) -> str:
    """'clip_grad_value_() (line 11) set weight to zeros', 'bias was set to None': one
    group of `_clearings`; `every`: the group is all the gradients."""
    subject = "every one of them" if every else _listing(names)
    if call is None:
        return f"{subject} {'was' if every or len(names) == 1 else 'were'} set to {how}"
    line = "" if location is None else f" ({_line_words(location, step_call)})"
    return f"{call}(){line} set {subject} to {how}"


def _line_words(source, beside) -> str:
    """Where `source` is, as 'line N' when it is in the file of `beside` (a SourceLocation
    or None)."""
    if source is None:
        return "?"
    if beside is not None and source.file == beside.file:
        return f"line {source.line}"
    return f"{short_path(source.file)}:{source.line}"


def source_text(source) -> str | None:
    """A finding's `source`: the SourceLocation as text, or None."""
    return str(source) if source is not None else None


def _listing(names: list) -> str:
    shown = ", ".join(names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")
