"""`Graph`: a plain-data snapshot of a backward graph, JSON-serialisable.

Nodes have stable ids (their position in `nodes`, in discovery order) and one
of five kinds: `op` (a backward node such as `MulBackward`), `param` (a leaf
named by a module's `named_parameters()` or `params=`), `input` (any other
leaf), `output` (a tensor the graph was captured from) and `saved` (a tensor
an op kept for its backward). Edges run the way data flows in the forward:
from the producer to the consumer, with the consumer's input slot.

>>> graph = Graph(nodes=[GraphNode(0, "input", "x", [TensorInfo((2,), "float32")]),
...                      GraphNode(1, "op", "ExpBackward", [TensorInfo((2,), "float32")], function="Exp")],
...               edges=[Edge(0, 1, index=0, output_nr=0, shape=(2,))])
>>> Graph.from_json(graph.to_json()) == graph
True
>>> [node.name for node in graph.inputs_of(1)]
['x']
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from .json_values import dumps, number, numbers

__all__ = ["Graph", "GraphNode", "Edge", "TensorInfo", "Source", "SCHEMA_VERSION", "NODE_KINDS"]

SCHEMA_VERSION = 1
NODE_KINDS = ("op", "param", "input", "output", "saved")


@dataclass(slots=True)
class TensorInfo:
    """Shape and dtype of one tensor, with value and gradient statistics when known
    (see `genesis.debug.stats` for their keys)."""

    shape: tuple
    dtype: str
    stats: dict | None = None
    grad: dict | None = None


@dataclass(slots=True, frozen=True)
class Source:
    """The user's line that called the forward of an op."""

    file: str
    line: int
    function: str
    code: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(slots=True)
class GraphNode:
    """One node; `outputs` has one TensorInfo per output (None for an output an op didn't make)."""

    id: int
    kind: str
    name: str
    outputs: list
    function: str | None = None       # the Function class of an op
    user_defined: bool = False        # the Function was written outside genesis
    device: str = "cpu"
    module: str | None = None         # dotted path of the module that ran it ("" for the top one)
    source: Source | None = None
    findings: list = field(default_factory=list)  # tags set by checkers: "nan", "grad_mismatch", ...

    @property
    def shape(self) -> tuple | None:
        """Shape of the first output."""
        return self.outputs[0].shape if self.outputs and self.outputs[0] is not None else None

    @property
    def dtype(self) -> str | None:
        return self.outputs[0].dtype if self.outputs and self.outputs[0] is not None else None


@dataclass(slots=True)
class Edge:
    """Data flows from node `src` (its output `output_nr`) into input slot `index` of `dst`."""

    src: int
    dst: int
    index: int
    output_nr: int = 0
    shape: tuple | None = None


@dataclass
class Graph:
    """A captured graph. From `genesis.debug.record()` a Graph also lists the backward
    calls (`steps`) that had this structure, and each leaf's gradient norm per step."""

    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    modules: dict = field(default_factory=dict)     # module path -> class name
    steps: list = field(default_factory=list)
    grad_norms: dict = field(default_factory=dict)  # leaf name -> [norm or None per step]
    meta: dict = field(default_factory=dict)

    def node(self, node_id: int) -> GraphNode:
        return self.nodes[node_id]

    def of_kind(self, kind: str) -> list:
        return [node for node in self.nodes if node.kind == kind]

    def find(self, name: str) -> GraphNode:
        """The first node called `name`.

        >>> Graph([GraphNode(0, "param", "fc1.weight", [])]).find("fc1.weight").id
        0
        """
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node named {name!r} in the graph; names include "
                       f"{sorted({n.name for n in self.nodes})[:10]}")

    def inputs_of(self, node_id: int) -> list:
        """Nodes feeding `node_id`, in input-slot order."""
        return [self.nodes[e.src] for e in sorted(self.edges, key=lambda e: e.index) if e.dst == node_id]

    def structure_key(self) -> tuple:
        """What two steps must share to count as the same graph: nodes (kind, name, Function,
        module, output shapes and dtypes) and edges; not statistics or source lines."""
        nodes = tuple((n.kind, n.name, n.function, n.module,
                       tuple(None if t is None else (t.shape, t.dtype) for t in n.outputs))
                      for n in self.nodes)
        edges = tuple((e.src, e.dst, e.index, e.output_nr) for e in self.edges)
        return nodes, edges

    # -- JSON ---------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"schema": "genesis.debug.Graph", "version": SCHEMA_VERSION,
                "nodes": [_node_to_dict(node) for node in self.nodes],
                "edges": [[e.src, e.dst, e.index, e.output_nr, _list(e.shape)] for e in self.edges],
                "modules": self.modules, "steps": self.steps, "grad_norms": self.grad_norms,
                "meta": self.meta}

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON; non-finite numbers are the strings "NaN", "Infinity", "-Infinity"
        (`genesis.debug.json_values`)."""
        return dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict) -> "Graph":
        version = data.get("version")
        if data.get("schema") != "genesis.debug.Graph" or version != SCHEMA_VERSION:
            raise ValueError(f"not a genesis Graph of schema version {SCHEMA_VERSION} "
                             f"(got schema {data.get('schema')!r}, version {version!r})")
        return cls(nodes=[_node_from_dict(item) for item in data["nodes"]],
                   edges=[Edge(src, dst, index, output_nr, _tuple(shape))
                          for src, dst, index, output_nr, shape in data["edges"]],
                   modules=dict(data["modules"]), steps=list(data["steps"]),
                   grad_norms={name: [number(value) for value in values]
                               for name, values in data["grad_norms"].items()},
                   meta=dict(data["meta"]))

    @classmethod
    def from_json(cls, text: str) -> "Graph":
        return cls.from_dict(json.loads(text))

    def _repr_svg_(self) -> str:
        """Inline picture in notebooks (rendering lives in the top-level `viz` package)."""
        from viz.render import render_svg

        return render_svg(self)

    def _repr_html_(self) -> str:
        """The interactive viewer in notebooks, in a sandboxed iframe (built by `viz`)."""
        from viz.html_report import notebook_html

        return notebook_html(self)

    def __repr__(self) -> str:
        ops = sum(1 for node in self.nodes if node.kind == "op")
        return f"<Graph: {ops} ops, {len(self.nodes)} nodes, {len(self.edges)} edges>"


def _list(shape):
    return None if shape is None else list(shape)


def _tuple(shape):
    return None if shape is None else tuple(shape)


def _figures(stats: dict | None) -> dict | None:
    return None if stats is None else numbers(stats)


def _node_to_dict(node: GraphNode) -> dict:
    data = {"id": node.id, "kind": node.kind, "name": node.name,
            "outputs": [None if t is None else [list(t.shape), t.dtype, t.stats, t.grad]
                        for t in node.outputs],
            "device": node.device}
    if node.function is not None:
        data["function"] = node.function
    if node.user_defined:
        data["user_defined"] = True
    if node.module is not None:
        data["module"] = node.module
    if node.source is not None:
        data["source"] = asdict(node.source)
    if node.findings:
        data["findings"] = list(node.findings)
    return data


def _node_from_dict(data: dict) -> GraphNode:
    source = data.get("source")
    return GraphNode(
        id=data["id"], kind=data["kind"], name=data["name"],
        outputs=[None if t is None else TensorInfo(tuple(t[0]), t[1], _figures(t[2]), _figures(t[3]))
                 for t in data["outputs"]],
        function=data.get("function"), user_defined=data.get("user_defined", False),
        device=data["device"], module=data.get("module"),
        source=Source(**source) if source is not None else None,
        findings=list(data.get("findings", ())))
