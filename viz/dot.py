"""`to_dot`: a captured Graph as a `graphviz.Digraph`, readable at any size.

>>> from genesis.debug import Graph, GraphNode, Edge, TensorInfo
>>> t = [TensorInfo((2,), "float32")]
>>> graph = Graph([GraphNode(0, "output", "y", t), GraphNode(1, "op", "MulBackward", t, function="Mul"),
...                GraphNode(2, "input", "x", t)], [Edge(1, 0, 0), Edge(2, 1, 0)])
>>> source = to_dot(graph).source
>>> "MulBackward" in source and "n2 -> n1" in source
True
"""
from __future__ import annotations

import os
from collections import Counter

import graphviz

from .collapse import DEFAULT_MAX_NODES, build_view
from .style import (FONT, counted, describe_stats, finding_styles, format_number, format_shape,
                    label_text, legend_entries, node_attributes, tooltip_text)

__all__ = ["to_dot", "view_to_dot"]

# Past this many drawn items, dot's placement of the nodes across (network simplex, which
# runs until it is optimal) is cut at BOUNDED_NSLIMIT x nodes iterations: an unrolled
# 2-layer LSTM of 979 items took dot over 2 minutes, and 14 s bounded. What dot places is
# the items plus one virtual node per rank an edge crosses, so a drawing of few items with
# many long edges is bounded too, past BOUNDED_FROM_PLACED of those: a 20-step log-domain
# Sinkhorn loop (282 items, each step reading the cost matrix drawn at the top: 5,400
# virtual nodes) took dot over 2 minutes, and 2 s bounded. Smaller drawings are laid out as
# before, to the optimum.
BOUNDED_FROM_ITEMS = 500
BOUNDED_FROM_PLACED = 2000
BOUNDED_NSLIMIT = "3"


def to_dot(graph, *, collapse_depth: int | None = None, focus=None, radius: int = 3,
           show_saved: bool = False, show_stats: bool = True, rankdir: str = "TB",
           max_nodes: int | None = DEFAULT_MAX_NODES, fold_repeats: bool = False) -> graphviz.Digraph:
    """Draw `graph` (a `genesis.debug.Graph`).

    Args:
        collapse_depth: fold every module deeper than this many levels into one node.
        focus, radius: draw only the nodes within `radius` edges of node `focus` (id or name).
        show_saved: also draw the tensors ops saved for backward.
        show_stats: add gradient norms and NaN/Inf counts to the labels.
        rankdir: "TB" (inputs at the top) or "LR".
        max_nodes: drawn-node budget; a larger drawing is collapsed until it fits
            (None: never). The picture says what was folded.
        fold_repeats: merge runs of identical numbered blocks (layers.0, layers.1, ...).
    """
    _check_rankdir(rankdir)
    view = build_view(graph, collapse_depth=collapse_depth, focus=focus, radius=radius,
                      show_saved=show_saved, max_nodes=max_nodes, fold_repeats=fold_repeats)
    return view_to_dot(graph, view, show_stats=show_stats, rankdir=rankdir)


def view_to_dot(graph, view, *, show_stats: bool = True, rankdir: str = "TB") -> graphviz.Digraph:
    """Draw an already chosen `viz.collapse.View` of `graph`. Each item becomes a DOT node
    named by its key (`n<id>` for a graph node, `m<i>`/`c<i>` for folded ones), so a caller
    holding the view can map drawn nodes back to graph node ids."""
    _check_rankdir(rankdir)
    return _Drawing(graph, view, show_stats).digraph(rankdir)


def _check_rankdir(rankdir: str) -> None:
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"rankdir must be one of TB, LR, BT, RL, got {rankdir!r}")


class _Drawing:
    def __init__(self, graph, view, show_stats: bool):
        self.graph = graph
        self.view = view
        self.show_stats = show_stats
        self.has_grads = any(info is not None and info.grad is not None
                             for node in graph.nodes for info in node.outputs)
        # A recorded graph's statistics are its latest step's (the backward call they are from).
        self.step = graph.steps[-1] if graph.steps else None
        self.kinds = set()
        self.findings = set()
        self.incoming, self.outgoing = {}, {}
        for (src, dst), shapes in view.edges.items():
            self.outgoing.setdefault(src, []).extend(shapes)
            self.incoming.setdefault(dst, []).extend(shapes)

    def digraph(self, rankdir: str) -> graphviz.Digraph:
        bounded = {"nslimit": BOUNDED_NSLIMIT} if len(self.view.items) > BOUNDED_FROM_ITEMS \
            or placed_nodes(self.view) > BOUNDED_FROM_PLACED else {}
        root = graphviz.Digraph("genesis", graph_attr={
            "rankdir": rankdir, "fontname": FONT, "fontsize": "13", "labelloc": "t",
            "label": label_text(self._headline()), "nodesep": "0.25", "ranksep": "0.35",
            "bgcolor": "white", "newrank": "true", **bounded},
            node_attr={"fontname": FONT, "fontsize": "11", "margin": "0.1,0.05", "height": "0.3"},
            edge_attr={"fontname": FONT, "fontsize": "9", "color": "#5A5A5A", "arrowsize": "0.6"})
        clusters = self._clusters()
        for item in self.view.items.values():
            target = clusters[item.cluster] if item.cluster in clusters else root
            kind, lines, tooltip, findings = self._describe(item)
            self.kinds.add(kind)
            self.findings.update(findings)
            target.node(item.key, label=label_text(lines), tooltip=tooltip_text(tooltip),
                        **node_attributes(kind, findings))
        self._attach_clusters(root, clusters)
        self._edges(root)
        self._legend(root)
        return root

    # -- text -------------------------------------------------------------------
    def _headline(self) -> list:
        ops = sum(1 for node in self.graph.nodes if node.kind == "op")
        params = sum(1 for node in self.graph.nodes if node.kind == "param")
        line = f"{counted(ops, 'op')}, {counted(params, 'parameter')}"
        if self.graph.steps:  # the steps recorded: later backward calls of a run leave no graph
            line += f", {counted(len(self.graph.steps), 'recorded backward step')} with this structure"
            if self.has_grads:  # a line of its own: the headline sets the drawing's least width
                return [line, f"gradient norms of step {self.step}, the last of them"] + self.view.notes
        return [line] + self.view.notes

    def _describe(self, item) -> tuple:
        """(style kind, label lines, tooltip lines, findings) of an item."""
        if item.kind == "node":
            kind, lines, tooltip, findings = self._describe_node(self.graph.nodes[item.members[0]])
            if item.uses is not None:
                note = f"shared: use {item.uses[0]} of {item.uses[1]}"
                lines.insert(1, note)
                tooltip.insert(1, note)
            return kind, lines, tooltip, findings
        members = [self.graph.nodes[i] for i in item.members]
        findings = []
        for node in members:
            for finding in self._node_findings(node):
                if finding not in findings:
                    findings.append(finding)
        ops = sum(1 for node in members if node.kind == "op")
        params = sum(1 for node in members if node.kind == "param")
        inputs = sum(1 for node in members if node.kind == "input")
        flow = self._flow_line(item.key)
        if item.kind == "chain":
            names = Counter(node.name for node in members if node.kind == "op")
            common = ", ".join(f"{name} ×{count:,}" for name, count in names.most_common(2))
            leaves = params + inputs
            lines = [f"… {counted(ops, 'op')} …", common] + ([counted(leaves, "leaf", "leaves")] if leaves else [])
            return "chain", lines, lines, findings
        path = item.title
        class_name = self.graph.modules.get(_block_root(path), "")
        counts = ", ".join([counted(ops, "op")] + [counted(number, noun) for number, noun
                                                   in ((params, "param"), (inputs, "input")) if number])
        if item.kind == "repeat":
            lines = [f"{path}  ×{item.count}", class_name,
                     counts + f" ({counted(ops // item.count, 'op')} per block)"]
        else:
            lines = [path + (f"  ({class_name})" if class_name else ""), counts]
        lines = [line for line in lines if line] + ([flow] if flow else [])
        return item.kind, lines, lines, findings

    def _describe_node(self, node) -> tuple:
        findings = self._node_findings(node)
        info = node.outputs[0] if node.outputs else None
        kind = "user" if node.kind == "op" and node.user_defined else node.kind
        lines = [node.name]
        if node.kind == "op":
            lines.append("  ".join(_tensor_text(t) for t in node.outputs if t is not None))
            if node.source is not None:
                lines.append(f"{os.path.basename(node.source.file)}:{node.source.line}")
        elif info is not None:
            lines.append(_tensor_text(info))
            if node.kind == "output" and info.stats is not None and info.shape == () \
                    and info.stats["mean"] is not None:
                lines.append(f"value {format_number(info.stats['mean'])}")
        if self.show_stats and info is not None:
            # the figures a reader compares with the parameter table say their step; the
            # headline says it for all (a line more on every op would make the drawing taller)
            lines.extend(describe_stats(info, step=self.step if node.kind in ("param", "input") else None))
            if "no_grad" in findings and node.kind in ("param", "input"):
                lines.append("no gradient")
        tooltip = [f"{node.name} (node {node.id}, {node.kind})"]
        if node.function:
            tooltip.append(f"Function {node.function}" + (" (user-defined)" if node.user_defined else ""))
        if node.module:
            tooltip.append(f"module {node.module}")
        if node.source is not None:
            tooltip.append(f"{node.source.file}:{node.source.line} in {node.source.function}")
            if node.source.code:
                tooltip.append(node.source.code)
        for index, output in enumerate(node.outputs):
            if output is not None:
                tooltip.append(f"output {index}: {_tensor_text(output)}")
                if output.stats:
                    tooltip.append("  values " + _stats_text(output.stats))
                if output.grad:
                    at = f" (step {self.step})" if self.step is not None else ""
                    tooltip.append(f"  grad{at} " + _stats_text(output.grad))
        if node.findings:
            tooltip.append("findings: " + ", ".join(node.findings))
            lines.extend(f"⚠ {tag}" for tag in node.findings)
        return kind, lines, tooltip, findings

    def _node_findings(self, node) -> list:
        # NaN anywhere, or Inf in a gradient, is drawn as a problem; Inf in values alone is not
        # (a -inf attention mask is deliberate) unless a checker tagged the node.
        bad_numbers = False
        for info in node.outputs:  # (a loop: called for every member of a folded chain)
            if info is not None and ((info.stats is not None and info.stats["nan"]) or (
                    info.grad is not None and (info.grad["nan"] or info.grad["inf"]))):
                bad_numbers = True
                break
        no_grad = self.has_grads and node.kind == "param" and node.outputs and \
            node.outputs[0].grad is None
        if not (bad_numbers or no_grad or node.findings):
            return []
        return finding_styles(list(node.findings) + (["no_grad"] if no_grad else []), bad_numbers)

    def _flow_line(self, key: str) -> str:
        parts = []
        inputs = _shapes_text(self.incoming.get(key, ()))
        if inputs:
            parts.append(f"in {inputs}")
        outputs = _shapes_text(self.outgoing.get(key, ()))
        if outputs:
            parts.append(f"out {outputs}")
        return " → ".join(parts)

    # -- structure ---------------------------------------------------------------
    def _clusters(self) -> dict:
        paths = set()
        for item in self.view.items.values():
            path = item.cluster
            while path:
                paths.add(path)
                path = path.rpartition(".")[0]
        clusters = {}
        for index, path in enumerate(sorted(paths)):
            class_name = self.graph.modules.get(path)
            clusters[path] = graphviz.Digraph(f"cluster_{index}", graph_attr={
                "label": label_text([path + (f"  ({class_name})" if class_name else "")]),
                "style": "rounded,filled", "fillcolor": _cluster_fill(path), "color": "#A0A0B8",
                "fontsize": "11", "labeljust": "l", "tooltip": tooltip_text([path])})
        return clusters

    @staticmethod
    def _attach_clusters(root, clusters: dict) -> None:
        """Nest clusters deepest first, so each is complete when copied into its parent."""
        for path in sorted(clusters, key=lambda p: p.count("."), reverse=True):
            parent = path.rpartition(".")[0]
            (clusters[parent] if parent else root).subgraph(clusters[path])

    def _edges(self, root) -> None:
        items = self.view.items
        for (src, dst), shapes in self.view.edges.items():
            plain = items[src].kind == "node" and items[dst].kind == "node"
            if plain:
                for shape in shapes:
                    root.edge(src, dst, tooltip=tooltip_text([format_shape(shape)]))
            else:
                text = format_shape(shapes[0]) + (f" ×{len(shapes)}" if len(shapes) > 1 else "")
                root.edge(src, dst, label=label_text([text]), tooltip=tooltip_text([text]))

    def _legend(self, root) -> None:
        with root.subgraph(name="cluster_legend", graph_attr={
                "label": "Legend", "style": "rounded", "color": "#C8C8C8", "fontsize": "11"}) as legend:
            for index, (attributes, text) in enumerate(legend_entries(self.kinds, self.findings)):
                legend.node(f"legend{index}", label=label_text([text]), **{"fontsize": "10", **attributes})


def placed_nodes(view) -> int:
    """About how many nodes dot places across: the drawn items, plus a virtual node for each
    rank an edge spans past its first, with ranks by longest path from the sources (dot's own
    ranking shortens some edges: an upper estimate). Iterative, in topological order.

    >>> from viz.collapse import View
    >>> edges = {("a", "b"): [], ("b", "c"): [], ("a", "c"): []}  # a -> c spans two ranks
    >>> placed_nodes(View(items=dict.fromkeys("abc"), edges=edges, notes=[]))
    4
    """
    successors = {key: [] for key in view.items}
    waiting = dict.fromkeys(view.items, 0)
    for src, dst in view.edges:
        successors[src].append(dst)
        waiting[dst] += 1
    rank = dict.fromkeys(view.items, 0)
    ready = [key for key, count in waiting.items() if count == 0]
    while ready:
        key = ready.pop()
        for dst in successors[key]:
            rank[dst] = max(rank[dst], rank[key] + 1)
            waiting[dst] -= 1
            if waiting[dst] == 0:
                ready.append(dst)
    return len(view.items) + sum(max(0, rank[dst] - rank[src] - 1) for src, dst in view.edges)


def _block_root(title: str) -> str:
    """The module path an item's title names (the first block of a repeat)."""
    return title.split(" … ")[0] if " … " in title else title


def _tensor_text(info) -> str:
    return f"{format_shape(info.shape)} {info.dtype}"


def _shapes_text(shapes) -> str:
    unique = list(dict.fromkeys(format_shape(shape) for shape in shapes))
    return ", ".join(unique[:3]) + (", …" if len(unique) > 3 else "")


def _stats_text(stats: dict) -> str:
    return ", ".join(f"{key} {format_number(value) if isinstance(value, float) else value}"
                     for key, value in stats.items())


def _cluster_fill(path: str) -> str:
    shades = ("#F4F6FB", "#EBEFF8", "#E2E8F5", "#D9E1F2")
    return shades[min(path.count("."), len(shades) - 1)]
