"""The findings of a `ParamWatch`, and their wording: one per problem, each stating its rule
and its numbers (the statuses and the rules that decide them are in
`genesis.debug.param_status`). Parameters without gradient are grouped by module and reason;
all-zero ones by module; exploding and vanishing ones each in one finding.

Parameters whose gradients vanished while others exploded (activations saturated by the
blow-up) are told inside the exploding finding, not as one of their own.

A zero-gradient finding's explanation pairs a module's biases and weights by their names
(`weight_beside`), as the "no effect on the loss" status does: a weight whose own bias
learned multiplied zeros (its input); with a bias at zero, what it is added to got no
gradient (or only gradient that cancelled); other parameters of the module learning (an
RNN's other direction or layer) show only that gradient reaches another part of it.
"""
from __future__ import annotations

from .findings import Finding
from .param_status import (EXPLODING_RULE, NEVER_TRAINS, SET_BY_HAND, VANISHING_RULE,
                           exploding_facts, vanishing_facts, weight_beside)
from .tracked_leaf import Tracked

__all__ = ["parameter_findings"]

# statuses that are no finding of these (NaN: told where it was born; "never trains": a layer
# built in each forward, told by forward_builds)
NO_FINDING = ("ok", "nan", "not measured", "not trained", "no effect on the loss", NEVER_TRAINS,
              SET_BY_HAND)


def parameter_findings(watch, locate, explain=None) -> list:
    """The findings of `watch` (a `ParamWatch`), one per problem. Parameters without gradient
    are grouped by module and reason; all-zero ones by module; exploding and vanishing ones
    each in one finding.
    `locate(entry)` gives (source, code, graph, node) to point at; `explain(tensor)`
    (a `genesis.debug.parameter_uses.Explanation`) says why one got no gradient."""
    statuses = watch.statuses()
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
    vanishing = vanishing_facts(watch.tracked.values())
    # gradients vanishing where others explode: saturated activations after the blow-up,
    # a consequence told inside the exploding finding
    fading = [entry for (status, _, _), entries in groups.items() if status == "vanishing"
              for entry in entries] if any(key[0] == "exploding" for key in groups) else []
    for (status, module, reason), entries in groups.items():
        if status == "no gradient":
            found.append(_no_gradient(watch, entries, module, reason, locate))
        elif status == "zero gradient":
            found.append(_zero_gradient(watch, entries, module, locate))
        elif status == "exploding":
            found.append(_exploding_finding(watch, entries, locate, fading))
        elif not fading:
            found.append(_vanishing_finding(entries, vanishing, locate))
    return found


def _no_gradient(watch, entries: list, module, reason, locate) -> Finding:
    listed = _listing([entry.name for entry in entries])
    plural = len(entries) > 1
    source, code, graph, node = locate(entries[0])
    if reason is not None and reason.source is not None:
        source, code = str(reason.source), reason.source.code
    site = entries[0].optimizer_site
    if source is None and site is not None:  # (no op used them: the line that gave them to
        source, code = str(site), site.code  # the optimizer that still holds them)
    calls = f"{watch.steps} backward call{'s' if watch.steps != 1 else ''}"
    them = "them" if plural else "it"
    title = f"{listed} received no gradient" + (f": {reason.summary(plural)}" if reason else "")
    message = (f"{listed} {'require' if plural else 'requires'} grad and "
               f"{'are' if plural else 'is'} {_expectation(entries[0], plural)}, but no "
               f"gradient reached {them} in {calls}")
    message += f": {reason.describe(plural)}." if reason else "."
    if reason is not None and reason.how == "unused":
        message += (f" No op took {them} as input while the steps were recorded: a layer "
                    "defined but not called in forward, or a parameter the model never uses?")
    elif reason is not None and reason.how == "unrecorded":
        message += (f" If {'their' if plural else 'its'} model ran only in later backward calls "
                    "than those recorded (genesis trace records the first --steps), trace "
                    "again with --steps covering one of them to see where the path to the "
                    "loss is cut; if it never ran, is it a layer defined but not called, or a "
                    "parameter the model never uses?")
    elif reason is not None and reason.how == "replaced":
        message += (f" The optimizer still updates the old {'ones' if plural else 'one'}, "
                    "which the forward no "
                    "longer uses, while the new module's parameters are in no optimizer: "
                    "build the optimizer after replacing the module (or give it the new "
                    "parameters with add_param_group).")
    elif reason is not None and reason.how == "used":
        message += " Is an output left out of the loss, or a branch not taken?"
    elif reason is not None and reason.how == "function":
        message += (f" Does {reason.function}.backward return None for that input (None means "
                    "no gradient), or is the Function's output left out of the loss?")
    elif reason is not None:
        message += (f" Remove the cut if {'they' if plural else 'it'} should learn; if not, set "
                    "requires_grad=False (or leave it out of the optimizer).")
    return Finding("no_gradient", "warning", title, message, module=module, source=source,
                   code=code, graph=graph, node=node,
                   details={"parameters": [entry.name for entry in entries],
                            "reason": reason.how if reason is not None else None})


def _expectation(entry: Tracked, plural: bool) -> str:
    if "optimizer" in entry.roles:
        return f"given to {entry.optimizer}" if entry.optimizer else "given to an optimizer"
    return ("parameters" if plural else "a parameter") + \
        " of a module whose forward ran with grad enabled"


def _zero_gradient(watch, entries: list, module, locate) -> Finding:
    listed = _listing([entry.name for entry in entries])
    source, code, graph, node = locate(entries[0])
    readings = sum(entry.history.reached for entry in entries)
    message = (f"every gradient {listed} received was exactly zero ({readings} reading"
               f"{'s' if readings != 1 else ''} in {watch.steps} backward calls): "
               + _zero_gradient_cause(watch, [entry.name for entry in entries], module))
    return Finding("zero_gradient", "warning", f"{listed}: gradient always zero", message,
                   module=module, source=source, code=code, graph=graph, node=node,
                   details={"parameters": [entry.name for entry in entries]})


def _zero_gradient_cause(watch, names: list, module) -> str:
    """Why the parameters `names` of `module` got only zeros, as far as the module's other
    parameters tell. A weight whose own bias (`weight_beside`) learned multiplied zeros:
    gradient reached the sum of its product and that bias. A bias whose own weight learned
    got its zeros in other backward calls than the weight's. The other parameters of the
    module learning (an RNN's other direction or layer) shows only that gradient reaches
    part of the module; where `names` hold a bias, the gradient of the sum it is added to
    summed to zero."""
    siblings = [entry for entry in watch.tracked.values() if module is not None
                and entry.rank == 2 and entry.name.rpartition(".")[0] == module]
    learning = [entry.name for entry in siblings
                if entry.name not in names and (entry.history.largest or 0.0) > 0.0]
    if not learning:
        return ("no gradient flows back through its output (e.g. all the ReLUs after "
                "it are dead, or its output is multiplied by 0), or what flows back "
                "cancels exactly (e.g. the loss subtracts two uses of the module on the "
                "same input, f(x) - f(x)), or, for a weight, its input is all zeros "
                "(e.g. the ReLUs before it are dead)")
    bias_of = {weight_beside(entry.name): entry.name for entry in siblings}
    fed_zeros = [name for name in names if bias_of.get(name) in learning]
    apart = [name for name in names if weight_beside(name) in learning]
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
        said.append(f"{_listing([weight_beside(name) for name in apart])} of the same "
                    "module did get non-zero gradients, but in none of the recent backward "
                    f"calls that gave {_listing(apart)} {_verb(apart, 'its', 'their')} "
                    "zeros: in those, no gradient flowed back through what "
                    f"{_verb(apart, 'it is', 'they are')} added to, or what flowed "
                    "cancelled out")
    if rest:
        said.append(_unpaired_zero_cause(rest, learning if not said else []))
    return "; ".join(said)


def _unpaired_zero_cause(names: list, learning: list) -> str:
    """`_zero_gradient_cause` for parameters whose own weight or bias got only zeros too
    (or has none), while `learning` (other parameters of the module) got gradients."""
    said = (f"{_listing(learning)} of the same module did get non-zero gradients, so "
            "gradient reaches another part of the module; " if learning else "")
    biases = [name for name in names if weight_beside(name) is not None]
    bare = [name for name in names if weight_beside(name) is None
            and not any(weight_beside(bias) == name for bias in biases)]
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


def _exploding_finding(watch, entries: list, locate, fading: list = ()) -> Finding:
    """`fading`: parameters whose gradients vanished meanwhile, told inside."""
    evidence = {entry: exploding_facts(entry.history, watch.loss_at) for entry in entries}
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


def _vanishing_finding(entries: list, vanishing: dict, locate) -> Finding:
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


def _at(steps: list) -> str:
    """ "median of steps 0-2", or "step 0" for one."""
    return f"median of steps {_span(steps)}" if len(steps) > 1 else f"step {steps[0]}"


def _span(steps: list) -> str:
    return f"{steps[0]}-{steps[-1]}" if len(steps) > 1 else str(steps[0])


def _range(values: list) -> str:
    low, high = min(values), max(values)
    return f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g} to {high:.3g}"


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
