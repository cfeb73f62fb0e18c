"""`capture_graph`: walk a backward graph (iteratively) into a plain-data `Graph`.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> y = x * 2 + 3
>>> graph = capture_graph(y)
>>> [(node.kind, node.name) for node in graph.nodes]
[('output', 'y'), ('op', 'AddBackward'), ('op', 'MulBackward'), ('input', 'x')]
"""
from __future__ import annotations

import sys
from collections import deque

from ..autograd.function import AccumulateGrad
from ..tensor import Tensor
from .gc_pause import paused_gc
from .graph import Edge, Graph, GraphNode, Source, TensorInfo
from .module_paths import module_paths
from .names import Names
from .readings import Readings
from .stats import grad_stats_later, value_stats_later

__all__ = ["capture_graph", "GraphBuilder", "RECORD_ATTRIBUTE", "op_record"]

# The attribute of an autograd node that holds the OpRecord `record()` wrote during forward
# (in the node's own attributes: no `metadata` dict made for it, and none left in the user's)
RECORD_ATTRIBUTE = "_genesis_op_record"


def op_record(node):
    """The OpRecord `record()` wrote on `node` during forward, or None."""
    return node.__dict__.get(RECORD_ATTRIBUTE)


def as_graph(value, namespace: dict | None = None) -> Graph:
    """`value` itself when it is a Graph; the graph behind it, captured, when it is a Tensor
    (`namespace`: the caller's variables, which name its leaves). How viz, which draws only
    plain-data graphs, takes a tensor from the user.

    >>> import genesis
    >>> x = genesis.tensor([1.0], requires_grad=True)
    >>> as_graph(x.exp())
    <Graph: 1 op, 4 nodes, 3 edges>
    """
    if isinstance(value, Graph):
        return value
    if isinstance(value, Tensor):
        return capture_graph(value, namespace=namespace)
    raise TypeError(f"expected a genesis.debug.Graph or a Tensor, got {type(value).__name__}")


def capture_graph(*roots, params: dict | None = None, include_saved: bool = True,
                  namespace: dict | None = None) -> Graph:
    """Snapshot the graph that produced `roots` (tensors).

    Leaves are named by `params` (name -> tensor, which wins), by their paths in
    the outermost modules that ran the graph's ops or that the caller's variables
    hold (`fc1.weight`; beside a second model, `generator.0.weight`: see
    `genesis.debug.names.RootModules`), by the caller's variable names, else
    `input0`, `input1`, ...; outputs likewise (`output0`, ...). `namespace`
    replaces the caller's local variables as the place names are looked up.
    Value statistics are taken from the outputs and leaves, gradient
    statistics from `.grad` after backward. Ops carry the path of the module
    call that ran them, as `genesis.debug.record()` names it ("cell#2.inp",
    `genesis.debug.module_paths`); ops carry more (source line, per-output
    statistics) when the forward ran under `record()`.
    """
    for index, root in enumerate(roots):
        if not isinstance(root, Tensor):
            raise TypeError(f"capture_graph takes tensors; argument {index} is a {type(root).__name__}")
    if namespace is None:
        namespace = sys._getframe(1).f_locals
    readings = Readings()
    builder = GraphBuilder(Names.from_namespace(namespace, params), include_saved,
                           readings=readings)
    with paused_gc():
        for root in roots:
            builder.add_output_tensor(root)
        builder.expand()
        builder.place_in_modules()
    readings.fetch()
    return builder.graph


class GraphBuilder:
    """Builds a Graph breadth-first from output tensors or root nodes; extendable.

    Statistics of tensors on a GPU are filled in when `readings` fetches (the owner's call).
    """

    def __init__(self, names: Names, include_saved: bool = True, modules: dict | None = None,
                 readings: Readings | None = None):
        self.names = names
        self.readings = readings if readings is not None else Readings()
        self.include_saved = include_saved
        self.graph = Graph(modules=dict(modules or {}))
        self.ids = {}          # autograd node -> graph id
        self._pending = deque()
        self._sources = {}     # (file, line, function) -> Source
        self._module_calls = {}  # graph id -> module call, for nodes placed by place_in_modules
        self._calls_seen = set()  # orders of the module calls seen
        self._leaves = {}         # graph id -> the tensor of a leaf, named again once placed
        self._stand_ins = {}      # leaf node -> (node, output_nr) linked in its place
        self._extra_inputs = {}   # autograd node -> inner roots linked into it so far

    # -- roots ----------------------------------------------------------------
    def add_output_tensor(self, tensor: Tensor) -> int:
        name = self.names.variable_name(tensor) or self.names.positional("output")
        info = TensorInfo(tuple(tensor.shape), tensor.dtype.name, self._value_stats(tensor),
                          self._grad_stats(tensor._grad) if tensor._grad is not None else None)
        output_id = self._add(GraphNode(0, "output", name, [info], device=str(tensor.device)))
        if tensor.grad_fn is not None:
            self._link(tensor.grad_fn, tensor._output_nr, output_id, 0, tuple(tensor.shape))
        elif tensor.requires_grad:
            self._link(tensor._accumulator or AccumulateGrad(tensor), 0, output_id, 0, tuple(tensor.shape))
        return output_id

    def add_output_of(self, node, output_nr: int, name: str | None = None) -> int:
        """An output node for output `output_nr` of the autograd `node` (a root of a backward run)."""
        shape, numpy_dtype, device = node._output_meta[output_nr]
        record = op_record(node)
        stats = record.values[output_nr] if record is not None and record.values else None
        output_id = self._add(GraphNode(0, "output", name or self.names.positional("output"),
                                        [TensorInfo(tuple(shape), _dtype_name(numpy_dtype), stats)],
                                        device=str(device)))
        self._link(node, output_nr, output_id, 0, tuple(shape))
        return output_id

    def add_inner_root(self, node, output_nr: int, caller, stand_ins: dict) -> None:
        """Output `output_nr` of `node`, a root of a backward call made inside the backward of
        `caller` (a node in the graph: checkpoint's recomputation), as an input of `caller`
        past its forward's arguments. The leaves of that call in `stand_ins` ({leaf node:
        (node, output_nr)}: copies of the caller's inputs) are linked as what they stand for."""
        self._stand_ins.update(stand_ins)
        extra = self._extra_inputs.get(caller, 0)
        self._extra_inputs[caller] = extra + 1
        self._link(node, output_nr, self.ids[caller], len(caller._next_nodes) + extra,
                   tuple(node._output_meta[output_nr][0]))
        self.expand()

    # -- the walk -------------------------------------------------------------
    def expand(self) -> None:
        """Visit every node reachable from what was added so far (breadth first, no recursion)."""
        pending = self._pending
        while pending:
            node = pending.popleft()
            node_id = self.ids[node]
            input_meta, output_nrs = node._input_meta, node._next_nrs
            for index, child in enumerate(node._next_nodes):
                if child is not None:
                    output_nr = output_nrs[index]
                    self._link(child, output_nr, node_id, index, tuple(input_meta[index][0]))
            if self.include_saved and node.__class__ is not AccumulateGrad:
                self._add_saved(node, node_id)

    def _link(self, child, output_nr: int, consumer: int, index: int, shape: tuple) -> None:
        if self._stand_ins and child in self._stand_ins:
            child, output_nr = self._stand_ins[child]
        child_id = self.ids.get(child)
        if child_id is None:
            child_id = self._add_autograd_node(child)
        self.graph.edges.append(Edge(child_id, consumer, index, output_nr, shape))

    def _add(self, node: GraphNode) -> int:
        nodes = self.graph.nodes
        node.id = len(nodes)
        nodes.append(node)
        return node.id

    def _add_autograd_node(self, node) -> int:
        if node.__class__ is AccumulateGrad:
            graph_node = self._leaf_node(node)
        else:
            graph_node = self._op_node(node)
        node_id = self._add(graph_node)
        self.ids[node] = node_id
        self._pending.append(node)
        if node._module_call is not None:
            self._note_module_call(node_id, node._module_call)
        elif node.__class__ is AccumulateGrad and node.variable is not None:
            self._leaves[node_id] = node.variable
        return node_id

    def _note_module_call(self, node_id: int, call) -> None:
        """Remember the module call an op ran in; its outermost module is a root the
        parameters are named by."""
        self._module_calls[node_id] = call
        if call[2] in self._calls_seen:
            return
        self._calls_seen.add(call[2])
        while call[1] is not None:
            call = call[1]
        if call[0] not in self.names.roots:
            self.names.add_root_module(call[0])

    def place_in_modules(self) -> None:
        """Set the module path of every op (from the module call it remembered) and name the
        parameters under the roots found, once the walk is done: numbering repeated calls,
        and telling one model from several, needs them all."""
        nodes = self.graph.nodes
        for node_id, tensor in self._leaves.items():  # named before every root was known
            name = self.names.parameter_name(tensor)
            if name is not None:
                node = nodes[node_id]
                node.name, node.kind, node.module = name, "param", name.rpartition(".")[0]
        self._leaves = {}
        calls = self._module_calls
        if not calls:
            return
        paths, classes = module_paths(calls.values(), self.names.roots.prefix)
        for node_id, call in calls.items():
            nodes[node_id].module = paths[call[2]]
        for path, class_name in classes.items():
            self.graph.modules.setdefault(path, class_name)
        self._module_calls = {}

    def _leaf_node(self, node) -> GraphNode:
        variable = node.variable
        shape, numpy_dtype, device = node._output_meta[0]
        name, kind = self.names.leaf_name(variable)
        info = TensorInfo(tuple(shape), _dtype_name(numpy_dtype))
        if variable is not None:
            info.stats = self._value_stats(variable)
            if variable._grad is not None:
                info.grad = self._grad_stats(variable._grad)
        module = name.rpartition(".")[0] if kind == "param" else None
        return GraphNode(0, kind, name, [info], device=str(device), module=module)

    def _value_stats(self, tensor: Tensor) -> dict:
        return value_stats_later(tensor._data, self.readings, tensor._device)

    def _grad_stats(self, gradient: Tensor) -> dict:
        return grad_stats_later(gradient._data, self.readings, gradient._device)

    def _op_node(self, node) -> GraphNode:
        cls = node._forward_cls
        record = op_record(node)
        metas = node._output_meta
        values = record.values if record is not None and record.values else None
        if values is not None:
            outputs = [None if meta is None else TensorInfo(tuple(meta[0]), _dtype_name(meta[1]), stats)
                       for meta, stats in zip(metas, values, strict=True)]
        else:
            outputs = [None if meta is None else TensorInfo(tuple(meta[0]), _dtype_name(meta[1]))
                       for meta in metas]
        device = next((meta[2] for meta in metas if meta is not None), None)
        source = node._source
        return GraphNode(0, "op", type(node).__name__, outputs,
                         cls.node_name if cls is not None else None,
                         cls is not None and not cls._builtin,
                         "cpu" if device is None else _device_name(device), None,
                         self._source(source) if source is not None else None)

    def _source(self, location) -> Source:
        """The Source of a location's innermost frame: one object per line (the ops of a loop
        share it), its code read once."""
        frame = location.frames[0]
        key = (frame.file, frame.line, frame.function)
        source = self._sources.get(key)
        if source is None:
            source = self._sources[key] = Source(frame.file, frame.line, frame.function, frame.code)
        return source

    def _add_saved(self, node, node_id: int) -> None:
        record = op_record(node)
        saved = record.saved if record is not None else node.saved_tensor_info
        module = self.graph.nodes[node_id].module
        call = self._module_calls.get(node_id)
        for index, entry in enumerate(saved):
            if entry is None:
                continue
            shape, dtype = entry
            saved_id = self._add(GraphNode(0, "saved", f"saved {index}",
                                           [TensorInfo(tuple(shape), _dtype_name(dtype))],
                                           device=self.graph.nodes[node_id].device, module=module))
            self.graph.edges.append(Edge(saved_id, node_id, index, 0, tuple(shape)))
            if call is not None:
                self._module_calls[saved_id] = call


_DTYPE_NAMES = {}   # NumPy dtype -> its name (dtype.name takes microseconds)
_DEVICE_NAMES = {}  # id(genesis device) -> str(device); devices are made once and kept


def _device_name(device) -> str:
    name = _DEVICE_NAMES.get(id(device))
    if name is None:
        name = _DEVICE_NAMES[id(device)] = str(device)
    return name


def _dtype_name(dtype) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name
