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

The JSON form is compact, since a graph may have a million nodes: a node leaves out
the fields that have their default value, statistics are lists in the order of
`genesis.debug.stats.VALUE_KEYS`/`GRAD_KEYS`, a source line is an index into the
graph's `sources` table (the ops of a loop share a few lines), and an edge leaves out
its output number when it is 0 and its shape when it is the producer's output shape.

>>> graph.to_dict()["edges"]
[[0, 1, 0]]
>>> graph.to_dict()["nodes"][1]
{'id': 1, 'kind': 'op', 'name': 'ExpBackward', 'outputs': [[[2], 'float32']], 'function': 'Exp'}
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from sys import intern
from typing import Protocol

from .gc_pause import paused_gc
from .json_values import dumps, number, numbers
from .stats import GRAD_KEYS, VALUE_KEYS, BatchedStats
from .validation import check_graph

__all__ = ["Graph", "GraphNode", "Edge", "TensorInfo", "Source", "SCHEMA_VERSION", "NODE_KINDS",
           "NotebookDrawing", "notebook_drawing"]

SCHEMA_VERSION = 2
# nodes (and edges) encoded at a time by Graph.to_json: each chunk's dicts and text are
# made and dropped while the whole graph is alive (2,000 nodes: about 2 MB; 10,000 took 10)
JSON_CHUNK = 2_000
STRUCTURE_CHUNK = 10_000  # nodes (and edges) at a time in Graph.structure_hash and same_structure
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
    # the JSON text of its nodes and edges, JSON_CHUNK at a time, once made (see `_json_parts`)
    _json: "_JSONChunks | None" = field(default=None, init=False, repr=False, compare=False)
    # what a drawing worked out from the nodes and edges, kept so that one graph drawn
    # several times (genesis trace's picture and each view of its report) is folded once:
    # viz.collapse keeps its layouts here, each with the lists it was made from
    drawing_cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

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

    def add_finding(self, node_id: int, tag: str) -> None:
        """Tag node `node_id` with a finding (once). Nodes change only this way once the
        graph is filed: its JSON text, kept once made, is made again for that node's chunk."""
        tags = self.nodes[node_id].findings
        if tag not in tags:
            tags.append(tag)
            if self._json is not None:
                self._json.nodes.pop(node_id // JSON_CHUNK, None)

    def structure_key(self) -> tuple:
        """What two steps must share to count as the same graph: nodes (kind, name, Function,
        module, output shapes and dtypes) and edges; not statistics or source lines."""
        return tuple(map(_node_structure, self.nodes)), tuple(map(_edge_structure, self.edges))

    def structure_hash(self) -> int:
        """A hash of `structure_key()`, made STRUCTURE_CHUNK nodes (and edges) at a time: the
        whole key of a big graph (27 MB of tuples for 100,000 ops) is never held. Graphs of
        the same structure have the same hash; `same_structure` tells them apart."""
        return hash((len(self.nodes), len(self.edges), *map(hash, self._structure_pieces())))

    def same_structure(self, other: "Graph") -> bool:
        """Whether `structure_key()` is the same for both graphs, compared a piece at a time.

        >>> one = Graph([GraphNode(0, "input", "x", [TensorInfo((2,), "float32")])])
        >>> two = Graph([GraphNode(0, "input", "x", [TensorInfo((2,), "float32")])])
        >>> one.same_structure(two), one.structure_hash() == two.structure_hash()
        (True, True)
        """
        return (len(self.nodes) == len(other.nodes) and len(self.edges) == len(other.edges)
                and all(mine == theirs for mine, theirs
                        in zip(self._structure_pieces(), other._structure_pieces())))

    def _structure_pieces(self):
        """`structure_key()`'s nodes, then its edges, STRUCTURE_CHUNK at a time."""
        for items, structure in ((self.nodes, _node_structure), (self.edges, _edge_structure)):
            for start in range(0, len(items), STRUCTURE_CHUNK):
                yield tuple(map(structure, items[start:start + STRUCTURE_CHUNK]))

    # -- JSON ---------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON form (see the module docstring); `from_dict` reads it back."""
        sources = {}
        with paused_gc():
            nodes = [_node_to_dict(node, sources) for node in self.nodes]
            edges = _edges_to_lists(self.edges, self.nodes)
        return {"schema": "genesis.debug.Graph", "version": SCHEMA_VERSION, "nodes": nodes,
                "edges": edges, "sources": [[source.file, source.line, source.function, source.code]
                                            for source in sources],
                "modules": self.modules, "steps": self.steps, "grad_norms": self.grad_norms,
                "meta": self.meta}

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON; non-finite numbers are the strings "NaN", "Infinity", "-Infinity"
        (`genesis.debug.json_values`). Without `indent` the text is compact and made
        JSON_CHUNK nodes at a time, never holding the whole `to_dict()` of a big graph."""
        if indent is not None:
            return dumps(self.to_dict(), indent=indent)
        return "".join(self.json_pieces())

    def json_pieces(self):
        """The text of `to_json()` in pieces to write one after another (a few per JSON_CHUNK
        nodes or edges), so a big graph's text need never be one string: an iterator whose
        chunks are all encoded when it is made (an error to encode is raised here), and
        expanded one at a time as it is read.

        >>> graph = Graph([GraphNode(0, "input", "x", [TensorInfo((2,), "float32")])])
        >>> "".join(graph.json_pieces()) == graph.to_json()
        True
        """
        cached, rest = self._json_chunks()
        return _json_text(cached, rest)

    def _json_parts(self) -> tuple:
        """(JSON lists of JSON_CHUNK nodes each, the same of edges, the JSON object of the
        other fields)."""
        cached, rest = self._json_chunks()
        return ([cached.text(cached.nodes[index]) for index in range(len(cached.nodes))],
                [cached.text(cached.edges[index]) for index in range(len(cached.edges))], rest)

    def _json_chunks(self) -> tuple:
        """(the `_JSONChunks` of the nodes and edges, the JSON object of the other fields).
        The chunks are kept: a filed graph is written several times (the run's journal,
        trace.json, the HTML report), and its nodes and edges change only by `add_finding`
        or by a later step putting new lists in their place."""
        cached = self._json
        if cached is None or cached.for_nodes is not self.nodes or cached.for_edges is not self.edges:
            cached = self._json = _JSONChunks(self.nodes, self.edges)
        with paused_gc():
            cached.make_all(self.nodes, self.edges)
        rest = _compact({"sources": [[source.file, source.line, source.function, source.code]
                                     for source in cached.sources],
                         "modules": self.modules, "steps": self.steps, "grad_norms": self.grad_norms,
                         "meta": self.meta})
        return cached, rest

    def __reduce__(self):
        # Pickled as its JSON text in chunks: pickling 100,000 node objects one by one takes
        # many times longer (genesis trace sends its graphs from the script's process), and
        # read back a chunk at a time. What to_json wrote needs no checks when it is read.
        return _unpickled, self._json_parts()

    @classmethod
    def from_dict(cls, data: dict, where: str = "") -> "Graph":
        """Read the JSON form back; a ValueError says where it is wrong (`where`: the
        graph's own place in a larger document, such as "graphs[0]")."""
        check_graph(data, versions=(SCHEMA_VERSION,), kinds=NODE_KINDS, where=where)
        return cls._from_checked_dict(data)

    @classmethod
    def _from_checked_dict(cls, data: dict) -> "Graph":
        return cls._assembled([data["nodes"]], [data["edges"]], data)

    @classmethod
    def _assembled(cls, node_lists, edge_lists, data: dict) -> "Graph":
        """The Graph of checked JSON data whose nodes and edges come in lists, one list at a
        time; strings and shapes repeated over nodes are kept once."""
        sources = [Source(file, line, function, code) for file, line, function, code in data["sources"]]
        shapes = {}
        with paused_gc():
            nodes = [_node_from_dict(item, sources, shapes) for part in node_lists for item in part]
            edges = [edge for part in edge_lists for edge in _edges_from_lists(part, nodes)]
        return cls(nodes=nodes, edges=edges,
                   modules=dict(data["modules"]), steps=list(data["steps"]),
                   grad_norms={name: [number(value) for value in values]
                               for name, values in data["grad_norms"].items()},
                   meta=dict(data["meta"]))

    @classmethod
    def from_json(cls, text: str) -> "Graph":
        with paused_gc():
            return cls.from_dict(json.loads(text))

    def _repr_svg_(self) -> str | None:
        """Inline picture in notebooks, drawn by the package that registered a
        `NotebookDrawing` (`import viz` does); None (no picture) when none has."""
        return None if notebook_drawing.current is None else notebook_drawing.current.svg(self)

    def _repr_html_(self) -> str | None:
        """The interactive viewer in notebooks, in a sandboxed iframe, from the registered
        `NotebookDrawing`; None when none is registered."""
        return None if notebook_drawing.current is None else notebook_drawing.current.html(self)

    def __repr__(self) -> str:
        ops = sum(1 for node in self.nodes if node.kind == "op")
        nodes, edges = len(self.nodes), len(self.edges)
        return (f"<Graph: {ops} op{'s' if ops != 1 else ''}, {nodes} node{'s' if nodes != 1 else ''}, "
                f"{edges} edge{'s' if edges != 1 else ''}>")


class NotebookDrawing(Protocol):
    """What draws a Graph in a notebook. genesis.debug never imports the drawing package
    (it sits above this one): viz registers its drawing when imported."""

    def svg(self, graph: Graph) -> str:
        """The picture of `graph`, as SVG text."""

    def html(self, graph: Graph) -> str:
        """The interactive viewer of `graph`, as HTML to embed."""


class _NotebookDrawingSlot:
    """The `NotebookDrawing` in use (`current`, None until one registers)."""

    def __init__(self):
        self.current: NotebookDrawing | None = None

    def register(self, drawing: NotebookDrawing) -> None:
        self.current = drawing


notebook_drawing = _NotebookDrawingSlot()


class _JSONChunks:
    """The JSON text of a graph's nodes and edges, JSON_CHUNK a chunk, made when first asked
    for, for the node and edge lists `for_nodes` and `for_edges`; `sources` numbers the
    source lines the node chunks refer to (a chunk made again numbers them the same).

    The chunks are kept compressed (zlib's fastest level: a 100,000-op chain's 25 MB of
    text in 4 MB, 0.2 s to compress once, 0.07 s to expand for each file written): the
    text lives as long as the graph, through the drawing of its views, the peak of the
    memory a big trace takes."""

    def __init__(self, for_nodes: list, for_edges: list):
        self.for_nodes, self.for_edges = for_nodes, for_edges
        self.sources = {}
        self.nodes = {}   # chunk index -> its compressed text
        self.edges = {}

    def make_all(self, nodes: list, edges: list) -> None:
        """Make the chunks not made yet (or dropped since: `Graph.add_finding`)."""
        for index in range(-(-len(nodes) // JSON_CHUNK)):
            if index not in self.nodes:
                start = index * JSON_CHUNK
                self.nodes[index] = _packed(_compact([_node_to_dict(node, self.sources)
                                                      for node in nodes[start:start + JSON_CHUNK]]))
        for index in range(-(-len(edges) // JSON_CHUNK)):
            if index not in self.edges:
                start = index * JSON_CHUNK
                self.edges[index] = _packed(_compact(_edges_to_lists(edges[start:start + JSON_CHUNK],
                                                                     nodes)))

    @staticmethod
    def text(blob: bytes) -> str:
        return zlib.decompress(blob).decode("ascii")


def _node_structure(node: GraphNode) -> tuple:
    """What `Graph.structure_key` holds of a node."""
    return (node.kind, node.name, node.function, node.module,
            tuple(None if info is None else (info.shape, info.dtype) for info in node.outputs))


def _edge_structure(edge: Edge) -> tuple:
    return edge.src, edge.dst, edge.index, edge.output_nr


def _packed(text: str) -> bytes:
    return zlib.compress(text.encode("ascii"), 1)


def _json_text(cached: _JSONChunks, rest: str):
    """The pieces of a graph's compact JSON text, expanding one chunk at a time."""
    yield f'{{"schema":"genesis.debug.Graph","version":{SCHEMA_VERSION},"nodes":['
    for blobs, closing in ((cached.nodes, '],"edges":['), (cached.edges, "],")):
        for index in range(len(blobs)):
            if index:
                yield ","
            yield cached.text(blobs[index])[1:-1]
        yield closing
    yield rest[1:]


def _compact(value) -> str:
    return dumps(value, separators=(",", ":"))


def _unpickled(nodes: list, edges: list, rest: str) -> Graph:
    return Graph._assembled(map(json.loads, nodes), map(json.loads, edges), json.loads(rest))


def _listed(stats, keys: tuple):
    """How trace.json writes statistics: the list of their values when their keys are the
    usual `keys` in order, else the mapping as it is."""
    if stats.__class__ is BatchedStats:
        listed = stats.values_if_keys(keys)
        return dict(stats.items()) if listed is None else listed
    return [*stats.values()] if (*stats,) == keys else stats


def _list(shape):
    return None if shape is None else list(shape)


def _tuple(shape):
    return None if shape is None else tuple(shape)


def _node_to_dict(node: GraphNode, sources: dict) -> dict:
    outputs = []
    for info in node.outputs:  # [shape, dtype, value statistics, gradient statistics]
        if info is None:
            outputs.append(None)
            continue
        stats, grad = info.stats, info.grad  # (the usual keys, in order: a list of the values)
        if grad is not None:
            outputs.append([list(info.shape), info.dtype,
                            None if stats is None else _listed(stats, VALUE_KEYS),
                            _listed(grad, GRAD_KEYS)])
        elif stats is not None:
            outputs.append([list(info.shape), info.dtype, _listed(stats, VALUE_KEYS)])
        else:
            outputs.append([list(info.shape), info.dtype])
    data = {"id": node.id, "kind": node.kind, "name": node.name, "outputs": outputs}
    if node.function is not None:
        data["function"] = node.function
    if node.user_defined:
        data["user_defined"] = True
    if node.device != "cpu":
        data["device"] = node.device
    if node.module is not None:
        data["module"] = node.module
    if node.source is not None:
        data["source"] = sources.setdefault(node.source, len(sources))
    if node.findings:
        data["findings"] = list(node.findings)
    return data


def _figures_from_json(figures, keys: tuple) -> dict | None:
    if figures is None:
        return None
    if isinstance(figures, list):
        figures = dict(zip(keys, figures))
    return numbers(figures) if str in map(type, figures.values()) else figures


def _node_from_dict(data: dict, sources: list, shapes: dict) -> GraphNode:
    source, function, module = data.get("source"), data.get("function"), data.get("module")
    return GraphNode(
        id=data["id"], kind=intern(data["kind"]), name=intern(data["name"]),
        outputs=[None if info is None else TensorInfo(
            _kept(shapes, tuple(info[0])), intern(info[1]),
            _figures_from_json(info[2] if len(info) > 2 else None, VALUE_KEYS),
            _figures_from_json(info[3] if len(info) > 3 else None, GRAD_KEYS))
            for info in data["outputs"]],
        function=None if function is None else intern(function),
        user_defined=data.get("user_defined", False), device=intern(data.get("device", "cpu")),
        module=None if module is None else intern(module),
        source=sources[source] if source is not None else None,
        findings=list(data.get("findings", ())))


def _kept(table: dict, value):
    """The value equal to `value` kept in `table` (`value` itself the first time)."""
    return table.setdefault(value, value)


def _edges_to_lists(edges: list, nodes: list) -> list:
    """[src, dst, index], then output_nr when not 0, then the shape when it is not the
    producer's output shape."""
    lists = []
    for edge in edges:
        if edge.shape == _produced_shape(nodes, edge.src, edge.output_nr):
            lists.append([edge.src, edge.dst, edge.index, edge.output_nr] if edge.output_nr
                         else [edge.src, edge.dst, edge.index])
        else:
            lists.append([edge.src, edge.dst, edge.index, edge.output_nr, _list(edge.shape)])
    return lists


def _edges_from_lists(lists: list, nodes: list) -> list:
    edges = []
    for entry in lists:
        src, dst, index = entry[0], entry[1], entry[2]
        output_nr = entry[3] if len(entry) > 3 else 0
        shape = _tuple(entry[4]) if len(entry) > 4 else _produced_shape(nodes, src, output_nr)
        edges.append(Edge(src, dst, index, output_nr, shape))
    return edges


def _produced_shape(nodes: list, node_id: int, output_nr: int):
    """The shape of output `output_nr` of node `node_id`; None where the graph has none."""
    if 0 <= node_id < len(nodes):
        outputs = nodes[node_id].outputs
        if output_nr < len(outputs) and outputs[output_nr] is not None:
            return outputs[output_nr].shape
    return None
