"""Graph capture and recording: plain-data `Graph` snapshots of backward graphs.

`capture_graph(*tensors)` snapshots the graph behind some outputs;
`record()` captures the graph of every backward call made while it is active,
with module paths, source lines and gradient statistics; `compare(a, b, *inputs)` runs two
implementations on the same inputs and compares their outputs and gradients. Rendering lives in the
top-level `viz` package, which reads these Graphs (genesis never imports it).

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> genesis.debug.capture_graph((x * x).sum())
<Graph: 2 ops, 6 nodes, 6 edges>
"""
from .capture import capture_graph
from .compare import compare
from .graph import SCHEMA_VERSION, Edge, Graph, GraphNode, Source, TensorInfo
from .record import record
from .stats import grad_stats, value_stats

__all__ = ["capture_graph", "record", "Graph", "GraphNode", "Edge", "TensorInfo", "Source",
           "SCHEMA_VERSION", "value_stats", "grad_stats", "compare"]
