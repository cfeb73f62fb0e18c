"""What changed between two traced runs: graph structure, gradient norms, loss, findings.

The typical use is after a refactor: trace the script before and after, then ask whether
the gradients are still the same. `diff_runs(a, b)` compares two `Trace`s:

- structure: the ops of each recorded graph, matched by module path and op order (an
  alignment of the two op sequences), so an op added, removed, or one whose output
  changed shape is named with its module and source line; parameters that appear,
  disappear or change shape;
- gradient norms: each parameter's norm at every step both runs measured, the largest
  relative changes first, with the first step that differs beyond the tolerance;
- loss: the first step whose loss differs beyond the tolerance (the loss of each
  backward call, kept by `genesis trace`; of older traces, that of the recorded steps);
- findings present in one run and not the other;
- the number of backward calls each run made, when they differ.

Two runs of the same seeded script on the CPU are identical, so the default tolerance is
tight (rtol 1e-5): a change it reports is a change in the computation.

>>> from genesis.debug.trace import Trace, ParameterRow
>>> a = Trace(script="train.py", parameters=[ParameterRow("w", (2,), "float32", 1.0,
...           history=[1.0, 2.0], steps=[0, 1])])
>>> b = Trace(script="train.py", parameters=[ParameterRow("w", (2,), "float32", 1.0,
...           history=[1.0, 2.5], steps=[0, 1])])
>>> diff_runs(a, a).differ, diff_runs(a, b).differ
(False, True)
>>> change = diff_runs(a, b).gradient_norms[0]
>>> change.parameter, change.first_step, round(change.max_rel_change, 2)
('w', 1, 0.2)
"""
from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass, field

__all__ = ["diff_runs", "RunDiff", "StructureChange", "NormChange", "LossChange",
           "loss_history"]


@dataclass
class StructureChange:
    """An op or parameter in one run's graph and not the other's (or reshaped).
    `kind`: "added" (in B only), "removed" (in A only), "reshaped", "graph" (a recorded
    graph only one run has). `node_a`/`node_b`: the node ids in each graph."""

    kind: str
    graph: int
    what: str
    module: str | None = None
    source: str | None = None
    detail: str = ""
    node_a: int | None = None
    node_b: int | None = None


@dataclass
class NormChange:
    """A parameter's gradient norms in both runs: the largest relative change and its step,
    and the first step that differs beyond the tolerance (None: none does)."""

    parameter: str
    max_rel_change: float
    step: int | None
    norm_a: float | None
    norm_b: float | None
    first_step: int | None
    steps_compared: int


@dataclass
class LossChange:
    """The first step whose loss differs beyond the tolerance (None: none does)."""

    first_step: int | None
    loss_a: float | None
    loss_b: float | None
    steps_compared: int
    max_rel_change: float = 0.0


@dataclass
class RunDiff:
    """What `diff_runs` found; `differ` is True when anything differs."""

    structure: list = field(default_factory=list)
    gradient_norms: list = field(default_factory=list)   # every shared parameter, largest first
    parameters_only_in_a: list = field(default_factory=list)
    parameters_only_in_b: list = field(default_factory=list)
    loss: LossChange | None = None
    findings_only_in_a: list = field(default_factory=list)
    findings_only_in_b: list = field(default_factory=list)
    steps_seen: tuple = (0, 0)
    scripts: tuple = ("", "")                             # the command line each run traced
    rtol: float = 1e-5
    atol: float = 1e-8

    def scripts_in_words(self) -> str | None:
        """A sentence when the two runs traced different scripts (or the same script with
        other arguments), which a diff can't tell from a change; None when they did not.

        >>> RunDiff(scripts=("train.py", "train.py --lr 0.1")).scripts_in_words()
        'The runs are of different commands: A ran train.py, B ran train.py --lr 0.1.'
        """
        a, b = self.scripts
        if a == b:
            return None
        return f"The runs are of different commands: A ran {a}, B ran {b}."

    def steps_in_words(self) -> str | None:
        """A sentence when the runs made different numbers of backward calls (a difference
        itself: their norms and losses are compared at the steps both made); None when not.

        >>> RunDiff(steps_seen=(4, 8)).steps_in_words()
        'The runs made different numbers of backward calls: A 4, B 8 (gradient norms and losses are compared at the steps both made).'
        """
        a, b = self.steps_seen
        if a == b:
            return None
        return (f"The runs made different numbers of backward calls: A {a}, B {b} (gradient "
                "norms and losses are compared at the steps both made).")

    @property
    def changed_norms(self) -> list:
        return [change for change in self.gradient_norms if change.first_step is not None]

    @property
    def compared_norms(self) -> list:
        """The shared parameters with a gradient norm known at some step in both runs."""
        return [change for change in self.gradient_norms if change.steps_compared]

    def norms_in_words(self) -> str:
        """A sentence on the gradient norms when none changed (the CLI's and diff.html's).

        >>> RunDiff().norms_in_words()
        'No parameter is in both runs.'
        """
        shared, compared = len(self.gradient_norms), len(self.compared_norms)
        if not shared:
            return "No parameter is in both runs."
        if not compared:
            return (f"Gradient norms not compared: no step's norms are known in both runs "
                    f"({shared} shared parameters).")
        left = f" ({shared - compared} more shared parameters had no step measured in both " \
               "runs)" if compared < shared else ""
        return (f"Gradient norms: the same for all {compared} shared parameters, at every step "
                f"both runs measured{left}.")

    @property
    def differ(self) -> bool:
        return bool(self.structure or self.changed_norms or self.parameters_only_in_a
                    or self.steps_seen[0] != self.steps_seen[1]
                    or self.parameters_only_in_b or self.findings_only_in_a
                    or self.findings_only_in_b
                    or (self.loss is not None and self.loss.first_step is not None))

    def to_dict(self) -> dict:
        return {"differ": self.differ, "rtol": self.rtol, "atol": self.atol,
                "steps_seen": list(self.steps_seen), "scripts": list(self.scripts),
                "structure": [asdict(change) for change in self.structure],
                "gradient_norms": [asdict(change) for change in self.gradient_norms],
                "parameters_only_in_a": self.parameters_only_in_a,
                "parameters_only_in_b": self.parameters_only_in_b,
                "loss": None if self.loss is None else asdict(self.loss),
                "findings_only_in_a": self.findings_only_in_a,
                "findings_only_in_b": self.findings_only_in_b}


def diff_runs(a, b, rtol: float = 1e-5, atol: float = 1e-8) -> RunDiff:
    """Compare two `genesis.debug.Trace`s (A the before, B the after)."""
    result = RunDiff(steps_seen=(a.steps_seen, b.steps_seen), rtol=rtol, atol=atol,
                     scripts=(_command(a), _command(b)))
    result.structure = _structure(a.graphs, b.graphs)
    rows_a = {row.name: row for row in a.parameters}
    rows_b = {row.name: row for row in b.parameters}
    result.parameters_only_in_a = [name for name in rows_a if name not in rows_b]
    result.parameters_only_in_b = [name for name in rows_b if name not in rows_a]
    changes = [_norm_change(name, rows_a[name], rows_b[name], rtol, atol)
               for name in rows_a if name in rows_b]
    result.gradient_norms = sorted(changes, key=lambda change: -change.max_rel_change)
    result.loss = _loss_change(loss_history(a), loss_history(b), rtol, atol)
    keys_a, keys_b = _finding_keys(a.findings), _finding_keys(b.findings)
    result.findings_only_in_a = [text for key, text in keys_a.items() if key not in keys_b]
    result.findings_only_in_b = [text for key, text in keys_b.items() if key not in keys_a]
    return result


def _command(trace) -> str:
    return " ".join([trace.script, *trace.args])


# -- structure ----------------------------------------------------------------------
def _structure(graphs_a: list, graphs_b: list) -> list:
    changes = []
    for index, (graph_a, graph_b) in enumerate(zip(graphs_a, graphs_b)):
        changes += _graph_changes(index, graph_a, graph_b)
    for index in range(len(graphs_b), len(graphs_a)):
        changes.append(StructureChange("graph", index, f"recorded graph {index + 1}",
                                       detail="recorded in A only"))
    for index in range(len(graphs_a), len(graphs_b)):
        changes.append(StructureChange("graph", index, f"recorded graph {index + 1}",
                                       detail="recorded in B only"))
    return changes


def _ops(graph) -> list:
    return [node for node in graph.nodes if node.kind == "op"]


def _signature(node) -> tuple:
    return node.module or "", node.function or node.name


def _graph_changes(index: int, graph_a, graph_b) -> list:
    ops_a, ops_b = _ops(graph_a), _ops(graph_b)
    matcher = difflib.SequenceMatcher(a=[_signature(node) for node in ops_a],
                                      b=[_signature(node) for node in ops_b], autojunk=False)
    changes = []
    for tag, start_a, end_a, start_b, end_b in matcher.get_opcodes():
        if tag == "equal":
            for node_a, node_b in zip(ops_a[start_a:end_a], ops_b[start_b:end_b]):
                shapes_a, shapes_b = _shapes(node_a), _shapes(node_b)
                if shapes_a != shapes_b:
                    changes.append(_change("reshaped", index, node_b,
                                           f"output {_shape_words(shapes_a)} -> "
                                           f"{_shape_words(shapes_b)}", node_a.id, node_b.id))
            continue
        for node in ops_a[start_a:end_a]:
            changes.append(_change("removed", index, node, "in A only", node.id, None))
        for node in ops_b[start_b:end_b]:
            changes.append(_change("added", index, node, "in B only", None, node.id))
    params_a = {node.name: node for node in graph_a.nodes if node.kind == "param"}
    params_b = {node.name: node for node in graph_b.nodes if node.kind == "param"}
    for name, node in params_a.items():
        other = params_b.get(name)
        if other is None:
            changes.append(StructureChange("removed", index, f"parameter {name}", node.module,
                                           detail="in A only", node_a=node.id))
        elif _shapes(node) != _shapes(other):
            changes.append(StructureChange("reshaped", index, f"parameter {name}", node.module,
                                           detail=f"{_shape_words(_shapes(node))} -> "
                                                  f"{_shape_words(_shapes(other))}",
                                           node_a=node.id, node_b=other.id))
    for name, node in params_b.items():
        if name not in params_a:
            changes.append(StructureChange("added", index, f"parameter {name}", node.module,
                                           detail="in B only", node_b=node.id))
    return changes


def _change(kind: str, index: int, node, detail: str, node_a, node_b) -> StructureChange:
    return StructureChange(kind, index, node.function or node.name, node.module,
                           None if node.source is None else str(node.source), detail,
                           node_a, node_b)


def _shapes(node) -> tuple:
    return tuple(None if info is None else tuple(info.shape) for info in node.outputs)


def _shape_words(shapes: tuple) -> str:
    return ", ".join("-" if shape is None else str(shape) for shape in shapes)


# -- gradient norms and loss -----------------------------------------------------------
def _norm_change(name: str, row_a, row_b, rtol: float, atol: float) -> NormChange:
    by_step_a = dict(zip(_steps(row_a), row_a.history))
    by_step_b = dict(zip(_steps(row_b), row_b.history))
    shared = sorted(set(by_step_a) & set(by_step_b))
    largest, at, first = 0.0, None, None
    for step in shared:
        change = _relative(by_step_a[step], by_step_b[step])
        if at is None or change > largest:
            largest, at = change, step
        if first is None and not _close(by_step_a[step], by_step_b[step], rtol, atol):
            first = step
    return NormChange(name, largest, at, by_step_a.get(at), by_step_b.get(at), first, len(shared))


def _steps(row) -> list:
    return list(row.steps) if row.steps else list(range(len(row.history)))


def loss_history(trace) -> dict:
    """{step: loss} of a trace: every backward call's (`meta["losses"]`, written by
    `genesis trace`), else the recorded steps' (the value of each recorded graph's single
    scalar output, where it has one)."""
    kept = trace.meta.get("losses") if isinstance(trace.meta, dict) else None
    if kept:
        return {int(step): value for step, value in zip(kept["steps"], kept["values"])}
    losses = {}
    for graph in trace.graphs:
        outputs = [node for node in graph.nodes if node.kind == "output"]
        if len(outputs) != 1 or not outputs[0].outputs or outputs[0].outputs[0] is None:
            continue
        info = outputs[0].outputs[0]
        if tuple(info.shape) == () and info.stats and len(graph.steps) == 1:
            losses[graph.steps[0]] = info.stats.get("mean")
    return losses


def _loss_change(losses_a: dict, losses_b: dict, rtol: float, atol: float) -> LossChange | None:
    shared = sorted(set(losses_a) & set(losses_b))
    if not shared:
        return None
    largest = max(_relative(losses_a[step], losses_b[step]) for step in shared)
    for step in shared:
        if not _close(losses_a[step], losses_b[step], rtol, atol):
            return LossChange(step, losses_a[step], losses_b[step], len(shared), largest)
    return LossChange(None, None, None, len(shared), largest)


def _relative(a, b) -> float:
    if a is None or b is None:
        return 0.0 if a is b else math.inf
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
    if a == b:
        return 0.0
    scale = max(abs(a), abs(b))
    return math.inf if math.isinf(scale) else abs(a - b) / scale


def _close(a, b, rtol: float, atol: float) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


# -- findings ------------------------------------------------------------------------
def _finding_keys(findings: list) -> dict:
    """{(kind, what it is about, where): its title} — a finding counts as the same in both
    runs when its kind, op or parameter and source line are."""
    keys = {}
    for finding in findings:
        subject = finding.details.get("parameter") or finding.op or finding.function or ""
        key = (finding.kind, subject, finding.source or "")
        where = f" ({finding.source})" if finding.source else ""
        keys.setdefault(key, f"{finding.kind}: {finding.title}{where}")
    return keys
