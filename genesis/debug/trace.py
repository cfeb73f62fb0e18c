"""`Trace`: everything `genesis trace` captured from one run of a script, as plain data.

It is what `trace.json` holds and what the console report, `genesis render`
and the HTML viewer read: the distinct graphs, the findings, a parameter
table with gradient-norm histories, and facts about the run.

>>> from genesis.debug.graph import Graph
>>> trace = Trace(script="train.py", graphs=[Graph()])
>>> Trace.from_json(trace.to_json()) == trace
True
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, replace

from .findings import Finding
from .graph import Graph
from .json_values import dumps, loads, number, numbers
from .validation import check_trace

__all__ = ["Trace", "ParameterRow", "TRACE_SCHEMA_VERSION", "READABLE_VERSIONS"]

TRACE_SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1: parameter rows without steps and summary


@dataclass
class ParameterRow:
    """One parameter (or other leaf that required grad) and its gradient norms per step.

    A step is one backward call, numbered from 0 in the order the session saw them (as
    `Graph.steps`). `grad_norm` is the latest norm read and `grad_norm_step` the step it
    is from; `history[i]` is the norm at step `steps[i]` (None where no gradient reached
    it), for the last 512 steps at most; `summary` covers the steps before those, oldest
    first, in bins whose widths double with age: each a dict with first_step, last_step,
    readings (steps with a gradient), non_finite (of those, NaN/Inf), and min, max, mean
    (of the finite norms) and last (None where there were none). Norms may be NaN or
    infinite. `status` is "ok", "no gradient", "not trained" (no gradient, and none
    expected: see `genesis.debug.param_status`), "zero gradient", "no effect on the loss" (a
    bias whose gradient was exactly zero while its module's weight learned in the same
    backward calls: not a finding), "exploding", "vanishing", "nan", "not measured",
    "never trains" (of a layer built anew in each forward: see
    `genesis.debug.forward_builds`) or "gradient set by hand" (no backward reached it, but its
    optimizer stepped with a .grad the script set: not a finding).

    Rows made without `steps` number their history from 0.
    """

    name: str
    shape: tuple
    dtype: str
    grad_norm: float | None
    status: str = "ok"
    history: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    grad_norm_step: int | None = None
    summary: list = field(default_factory=list)

    def __post_init__(self):
        if not self.steps and self.history:
            self.steps = list(range(len(self.history)))
        if self.grad_norm_step is None and self.grad_norm is not None:
            self.grad_norm_step = next((step for step, norm in zip(reversed(self.steps),
                                                                   reversed(self.history))
                                        if norm is not None), None)


@dataclass
class Trace:
    """One traced run: graphs, findings, parameters, and how the script ended."""

    script: str
    args: list = field(default_factory=list)
    graphs: list = field(default_factory=list)          # genesis.debug.Graph, distinct structures
    findings: list = field(default_factory=list)        # Finding, most severe first
    parameters: list = field(default_factory=list)      # ParameterRow
    steps_recorded: int = 0                             # backward calls captured fully
    steps_seen: int = 0                                 # all backward calls
    exit_code: int = 0                                  # the script's own exit status
    script_error: str | None = None                     # its traceback, if it raised
    duration_s: float = 0.0
    meta: dict = field(default_factory=dict)            # genesis version, options, time, ...

    def graph_summary(self) -> list:
        """Per graph: {"ops": how many op nodes, "devices": the devices they ran on}; kept in
        `meta["graph_summary"]` by `without_graphs()`.

        >>> from genesis.debug.graph import GraphNode
        >>> Trace("x.py", graphs=[Graph([GraphNode(0, "op", "ExpBackward", [])])]).graph_summary()
        [{'ops': 1, 'devices': ['cpu']}]
        """
        if not self.graphs:
            return list(self.meta.get("graph_summary", []))
        return [{"ops": sum(1 for node in graph.nodes if node.kind == "op"),
                 "devices": sorted({node.device for node in graph.nodes if node.kind == "op"})}
                for graph in self.graphs]

    def without_graphs(self) -> "Trace":
        """A copy that leaves the graphs out, with their `graph_summary()` in its meta: what a
        report needs, without the weight of a big graph."""
        return replace(self, graphs=[], meta={**self.meta, "graph_summary": self.graph_summary()})

    def to_dict(self) -> dict:
        return {"schema": "genesis.debug.Trace", "version": TRACE_SCHEMA_VERSION,
                "script": self.script, "args": list(self.args),
                "graphs": [graph.to_dict() for graph in self.graphs],
                "findings": [finding.to_dict() for finding in self.findings],
                "parameters": [_row_to_dict(row) for row in self.parameters],
                "steps_recorded": self.steps_recorded, "steps_seen": self.steps_seen,
                "exit_code": self.exit_code, "script_error": self.script_error,
                "duration_s": self.duration_s, "meta": self.meta}

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON, whatever the run held: numbers that are not finite are written as the
        strings "NaN", "Infinity" and "-Infinity" and read back as floats by `from_json`;
        names that are not valid Unicode have U+FFFD in place of the bad code points
        (`genesis.debug.json_values`). Without `indent` the text is compact, each graph's
        written by `Graph.json_pieces` (a big graph's `to_dict()` is never held whole)."""
        if indent is not None:
            return dumps(self.to_dict(), indent=indent)
        return "".join(self.json_pieces())

    def json_pieces(self):
        """The compact text of `to_json()` in pieces to write one after another (a big graph's
        text is never one string): an iterator, each graph's chunks encoded when it is made
        and expanded as they are read (`Graph.json_pieces`).

        >>> trace = Trace(script="train.py", graphs=[Graph()])
        >>> "".join(trace.json_pieces()) == trace.to_json()
        True
        """
        text = dumps(replace(self, graphs=[]).to_dict(), separators=(",", ":"))
        # the first '"graphs":[]' is the field: inside a string value its quotes are escaped
        head, _, tail = text.partition('"graphs":[]')
        pieces = [[head, '"graphs":[']]
        for index, graph in enumerate(self.graphs):
            if index:
                pieces.append([","])
            pieces.append(graph.json_pieces())
        pieces.append(["]", tail])
        return itertools.chain.from_iterable(pieces)

    @classmethod
    def from_dict(cls, data: dict) -> "Trace":
        check_trace(data, versions=READABLE_VERSIONS, row_type=ParameterRow)
        return cls(script=data["script"], args=list(data["args"]),
                   graphs=[Graph.from_dict(graph, where=f"graphs[{index}]")
                           for index, graph in enumerate(data["graphs"])],
                   findings=[_finding_from_dict(finding) for finding in data["findings"]],
                   parameters=[_row_from_dict(row) for row in data["parameters"]],
                   steps_recorded=data["steps_recorded"], steps_seen=data["steps_seen"],
                   exit_code=data["exit_code"], script_error=data["script_error"],
                   duration_s=data["duration_s"], meta=_meta_from_dict(data["meta"]))

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        return cls.from_dict(loads(text))

    @classmethod
    def load(cls, path) -> "Trace":
        """Read a `trace.json`, with a clear error for a missing or foreign file."""
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            raise FileNotFoundError(f"no trace file at {path}; run `genesis trace SCRIPT` first") from None
        try:
            return cls.from_json(text)
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"{path} is not a valid genesis trace.json: {error}") from None


def _finding_from_dict(data: dict) -> Finding:
    return Finding.from_dict({**data, "details": numbers(data.get("details", {}),
                                                          keep=NAME_FIELDS)})


def _row_from_dict(data: dict) -> ParameterRow:
    return ParameterRow(**{**data, "shape": tuple(data["shape"]),
                           "grad_norm": number(data["grad_norm"]),
                           "history": [number(norm) for norm in data["history"]],
                           "summary": [numbers(summary) for summary in data.get("summary", [])]})


def _meta_from_dict(meta: dict) -> dict:
    meta = dict(meta)
    if "checks" in meta:
        meta["checks"] = [{**check, "max_abs_error": number(check.get("max_abs_error"))}
                          for check in meta["checks"]]
    if isinstance(meta.get("losses"), dict):  # NaN/Inf losses are written as strings
        meta["losses"] = {**meta["losses"],
                          "values": [number(value) for value in meta["losses"].get("values", [])]}
    return meta


# Fields of a finding's details that hold names (any string), not numbers.
NAME_FIELDS = ("parameters", "names", "name", "module", "modules")


def _row_to_dict(row: ParameterRow) -> dict:
    return {"name": row.name, "shape": list(row.shape), "dtype": row.dtype,
            "grad_norm": row.grad_norm, "grad_norm_step": row.grad_norm_step, "status": row.status,
            "history": list(row.history), "steps": list(row.steps),
            "summary": [dict(summary) for summary in row.summary]}
