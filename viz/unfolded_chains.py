"""The view of a graph drawn node for node (no module folded) with its long linear runs of
ops compressed, made straight from the graph: what `viz.collapse` gives for that policy by
making an item for every node and then folding the runs, without the items, keys and
edge lists of the nodes a run folds away. A big graph without modules (a 100,000-op
chain) is drawn this way: the full view was the peak of the memory its trace took.

The result is the same view, item for item and edge for edge (tests/viz compare the two).

>>> from genesis.debug import Graph, GraphNode, Edge
>>> chain = Graph([GraphNode(i, "op", f"op{i}", []) for i in range(6)],
...               [Edge(i, i + 1, 0) for i in range(5)])
>>> view = unfolded_chain_view(chain, chain.nodes, {})
>>> [(item.key, item.members) for item in view.items.values()]
[('n0', [0]), ('n5', [5]), ('c0', [1, 2, 3, 4])]
>>> list(view.edges)
[('n0', 'c0'), ('c0', 'n5')]
"""
from __future__ import annotations

from .view_items import MIN_CHAIN, Item, View

__all__ = ["unfolded_chain_view"]

_NONE, _MANY = -1, -2  # no successor (op input) yet; more than one


def unfolded_chain_view(graph, visible: list, parts: dict) -> View:
    """The items and edges of `visible` (graph nodes, in drawing order) with every run of
    MIN_CHAIN or more op nodes folded as `viz.collapse` folds them; `parts`: node id -> its
    module path split at the dots (none: outside every module)."""
    nodes = graph.nodes
    shown = bytearray(len(nodes))
    for node in visible:
        shown[node.id] = 1
    is_op = bytearray(len(nodes))
    for node in visible:
        if node.kind == "op":
            is_op[node.id] = 1
    only_successor, only_op_input = [_NONE] * len(nodes), [_NONE] * len(nodes)
    leaf_uses = {}  # leaf id -> {the ids it feeds: None}
    for edge in graph.edges:
        src, dst = edge.src, edge.dst
        if not (shown[src] and shown[dst]) or src == dst:
            continue
        if nodes[src].kind in ("param", "input"):
            leaf_uses.setdefault(src, {})[dst] = None
        only_successor[src] = dst if only_successor[src] in (_NONE, dst) else _MANY
        if is_op[src]:
            only_op_input[dst] = src if only_op_input[dst] in (_NONE, src) else _MANY

    def following(op: int) -> int | None:
        """The op after op `op` in a run, or None."""
        successor = only_successor[op]
        if successor >= 0 and is_op[successor] and only_op_input[successor] == op \
                and parts.get(successor, ()) == parts.get(op, ()):
            return successor
        return None

    chain_of = {}  # node id -> key of the chain it is folded into
    chains = []
    for node in visible:  # each run from its start (see viz.collapse._linear_runs)
        start = node.id
        if not is_op[start]:
            continue
        before = only_op_input[start]
        if before >= 0 and following(before) == start:
            continue
        run = [start]
        after = following(start)
        while after is not None:
            run.append(after)
            after = following(after)
        if len(run) >= MIN_CHAIN:
            chain = Item(f"c{len(chains)}", "chain", _cluster(parts.get(start, ())), run[1:-1], "")
            chains.append(chain)
            for member in chain.members:
                chain_of[member] = chain.key
    by_key = {chain.key: chain for chain in chains}
    for node in visible:  # a leaf that feeds only the inside of one run is folded into it
        uses = leaf_uses.get(node.id)
        if uses is not None:
            targets = {chain_of.get(use) for use in uses}
            if len(targets) == 1 and None not in targets:
                (chain_key,) = targets
                by_key[chain_key].members.append(node.id)
                chain_of[node.id] = chain_key
    items = {}
    for node in visible:
        if node.id not in chain_of:
            key = f"n{node.id}"
            items[key] = Item(key, "node", _cluster(parts.get(node.id, ())), [node.id], node.name)
    items.update(by_key)
    return View(items, _edges(graph, shown, chain_of), [])


def _edges(graph, shown: bytearray, chain_of: dict) -> dict:
    """The view's edges: (src key, dst key) -> the shapes of the graph edges it stands for,
    in the order `viz.collapse` lists them (grouped by node pair first, then by item pair);
    the edges inside one chain (a folded leaf's among them) are left out."""
    by_pair = {}
    for edge in graph.edges:
        src, dst = edge.src, edge.dst
        if not (shown[src] and shown[dst]) or src == dst:
            continue
        chain = chain_of.get(src)
        if chain is not None and chain == chain_of.get(dst):
            continue
        by_pair.setdefault((src, dst), []).append(edge.shape)
    edges = {}
    for (src, dst), shapes in by_pair.items():
        pair = (chain_of.get(src) or f"n{src}", chain_of.get(dst) or f"n{dst}")
        edges.setdefault(pair, []).extend(shapes)
    return edges


def _cluster(parts: tuple) -> str | None:
    return ".".join(parts) or None
