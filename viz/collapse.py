"""What to draw: a `View` of a Graph with modules folded, repeated blocks merged,
long runs of ops compressed, or only a focus neighbourhood kept.

Each drawn item stands for one or more graph nodes. Folding never merges nodes
by anything but their module path, their position in a repeated block or
their place in a linear run, so distinct tensors stay distinct.

>>> from genesis.debug import Graph, GraphNode, Edge, TensorInfo
>>> t = [TensorInfo((2,), "float32")]
>>> nodes = [GraphNode(0, "output", "y", t), GraphNode(1, "op", "TanhBackward", t, module="fc"),
...          GraphNode(2, "op", "AddBackward", t, module="fc"), GraphNode(3, "param", "fc.bias", t, module="fc")]
>>> graph = Graph(nodes, [Edge(1, 0, 0), Edge(2, 1, 0), Edge(3, 2, 0)])
>>> [(item.kind, item.title) for item in build_view(graph, collapse_depth=0).items.values()]
[('node', 'y'), ('module', 'fc')]
"""
from __future__ import annotations

import re
import weakref
from collections import deque
from dataclasses import dataclass

from genesis.debug.gc_pause import paused_gc

from .unfolded_chains import unfolded_chain_view
from .view_items import MIN_CHAIN, Item, View

__all__ = ["View", "Item", "build_view", "neighbourhood", "DEFAULT_MAX_NODES"]

DEFAULT_MAX_NODES = 500
SHARED_LEAF_USES = 3  # a leaf feeding this many items is drawn beside each use
_NUMBERED = re.compile(r"^(.*)\.(\d+)$|^(\d+)$")
_CALL = re.compile(r"^(.*)#(\d+)$")          # "cell#2": the 2nd call of module "cell"
_CALL_NUMBERS = re.compile(r"#\d+")


@dataclass
class _Policy:
    depth: int | None = None      # fold modules deeper than this
    repeats: bool = False
    chains: bool = False


def build_view(graph, *, collapse_depth: int | None = None, focus=None, radius: int = 3,
               show_saved: bool = False, max_nodes: int | None = DEFAULT_MAX_NODES,
               fold_repeats: bool = False) -> View:
    """Choose the items to draw. Over `max_nodes` items, fold more until it fits: deeper
    modules first (then repeated blocks at each depth), then long linear runs of ops,
    and as a last resort keep only the items nearest the outputs."""
    visible = [node for node in graph.nodes if show_saved or node.kind != "saved"]
    notes = []
    if focus is not None:
        centre = _resolve_focus(graph, focus)
        keep = neighbourhood(graph, centre.id, radius, show_saved)
        visible = [node for node in visible if node.id in keep]
        notes.append(f"neighbourhood of {centre.name} (node {centre.id}), radius {radius}: "
                     f"{len(visible):,} of {len(graph.nodes):,} nodes")
    with paused_gc():
        layout = _Layout(graph, visible) if focus is not None else _layout_of(graph, visible, show_saved)
        asked = _Policy(collapse_depth, fold_repeats)
        candidates = [asked] if max_nodes is None else [asked] + _escalation(asked, layout)
        for policy in candidates:
            if max_nodes is not None and not policy.chains and layout.count(policy) > max_nodes:
                continue
            view = layout.view(policy)
            if max_nodes is None or len(view.items) <= max_nodes:
                break
        if max_nodes is not None and len(view.items) > max_nodes:
            view = _nearest_outputs(view, graph, max_nodes)
        if policy is not asked:
            view.notes.insert(0, _budget_note(policy, max_nodes, layout))
    view.notes[:0] = notes
    return view


def neighbourhood(graph, centre: int, radius: int, show_saved: bool = False) -> set:
    """Ids of the nodes within `radius` edges of `centre`, in either direction.

    >>> from genesis.debug import Graph, GraphNode, Edge
    >>> chain = Graph([GraphNode(i, "op", f"op{i}", []) for i in range(6)],
    ...               [Edge(i, i + 1, 0) for i in range(5)])
    >>> sorted(neighbourhood(chain, 2, 1))
    [1, 2, 3]
    """
    adjacent = {}
    for edge in graph.edges:
        adjacent.setdefault(edge.src, []).append(edge.dst)
        adjacent.setdefault(edge.dst, []).append(edge.src)
    kinds = {node.id: node.kind for node in graph.nodes}
    seen = {centre: 0}
    queue = deque([centre])
    while queue:
        node = queue.popleft()
        if seen[node] == radius:
            continue
        for other in adjacent.get(node, ()):
            if other not in seen and (show_saved or kinds[other] != "saved"):
                seen[other] = seen[node] + 1
                queue.append(other)
    return set(seen)


def _resolve_focus(graph, focus):
    if isinstance(focus, str):
        return graph.find(focus)
    if not isinstance(focus, int) or not 0 <= focus < len(graph.nodes):
        raise ValueError(f"focus must be a node id in 0..{len(graph.nodes) - 1} or a node name, "
                         f"got {focus!r}")
    return graph.nodes[focus]


def _escalation(policy: _Policy, layout) -> list:
    """Ever stronger policies, starting from the one asked for; the last compresses chains."""
    max_depth = layout.max_depth
    start = max_depth - 1 if policy.depth is None else min(policy.depth, max_depth) - 1
    steps = []
    for depth in range(start, -1, -1):
        steps.append(_Policy(depth, policy.repeats))
        if not policy.repeats and layout.has_repeats(depth):
            steps.append(_Policy(depth, True))
    last = steps[-1] if steps else policy
    steps.append(_Policy(last.depth, last.repeats or layout.has_repeats(last.depth), chains=True))
    return steps


def _budget_note(policy: _Policy, max_nodes: int, layout) -> str:
    done = []
    if policy.depth is not None and layout.max_depth > policy.depth:
        done.append("modules folded" if policy.depth == 0 else f"modules below depth {policy.depth} folded")
    if policy.repeats:
        done.append("repeated blocks merged")
    if policy.chains:
        done.append("long runs of ops compressed")
    return f"collapsed to fit {max_nodes:,} nodes ({layout.node_count:,} in the graph): " + \
        (", ".join(done) if done else "nothing to fold")


def _layout_of(graph, visible: list, show_saved: bool) -> "_Layout":
    """The layout of `graph`'s `visible` nodes (all of them, or all but saved tensors), made
    once per graph: it is kept in `graph.drawing_cache` while the graph's nodes and edges are
    the lists it was made from (findings tagged on nodes change no layout)."""
    cached = graph.drawing_cache.get(("layout", show_saved))
    if cached is not None and cached[0] is graph.nodes and cached[1] is graph.edges:
        return cached[2]
    layout = _Layout(graph, visible)
    graph.drawing_cache[("layout", show_saved)] = (graph.nodes, graph.edges, layout)
    return layout


class _Layout:
    """The visible nodes with their module paths split once, reused by every policy tried
    and, through `_layout_of`, by every drawing of the graph: each policy's view is worked
    out once, and each caller gets a copy of it to change."""

    def __init__(self, graph, visible: list):
        self._graph = weakref.ref(graph)  # (kept in the graph: a strong reference would be a cycle)
        self.visible = visible
        self.node_count = len(visible)
        placed = _placed_modules(graph, visible)
        # (nodes outside every module, all of a plain chain's, are left out: their parts are ())
        self.parts = {node.id: tuple(placed[node.id].split(".")) for node in visible if placed[node.id]}
        self.max_depth = max((len(parts) for parts in self.parts.values()), default=0)
        self._repeat_groups = {}
        self._views = {}  # (depth, repeats, chains) -> View

    @property
    def graph(self):
        return self._graph()

    def view(self, policy: _Policy) -> View:
        """The items and edges `policy` draws (a new View each call: callers add notes,
        or keep only some items)."""
        key = (policy.depth, policy.repeats, policy.chains)
        made = self._views.get(key)
        if made is None:
            made = self._views[key] = self._made_view(policy)
        return View(dict(made.items), dict(made.edges), list(made.notes))

    def has_repeats(self, depth) -> bool:
        return depth is not None and bool(self._repeats_at(depth))

    # -- assigning graph nodes to items -----------------------------------------
    def count(self, policy: _Policy) -> int:
        """How many items `policy` draws (chains aside)."""
        if policy.depth is None:
            return self.node_count
        depth = policy.depth
        repeats = self._repeats_at(depth) if policy.repeats else {}
        folded = set()
        plain = 0
        for node in self.visible:
            parts = self.parts.get(node.id, ())
            if len(parts) > depth and node.kind != "output":
                path = ".".join(parts[:depth + 1])
                group = repeats.get(path)
                folded.add(group[0] if group is not None else path)
            else:
                plain += 1
        return plain + len(folded)

    def _made_view(self, policy: _Policy) -> View:
        graph = self.graph
        if policy.chains and policy.depth is None:  # node for node, the runs folded as found
            view = unfolded_chain_view(graph, self.visible, self.parts)
        else:
            view = self._folded(policy)
            if policy.chains:
                _compress_chains(view, graph)
        _copy_shared_leaves(view, graph)
        return view

    def _folded(self, policy: _Policy) -> View:
        """The items of `policy`'s folding (chains aside) and the edges between them."""
        graph = self.graph
        items = {}
        key_of = {}
        depth = policy.depth
        repeats = self._repeats_at(depth) if policy.repeats else {}
        folded = {}  # module path (first block of a repeat) -> its item
        for node in self.visible:
            parts = self.parts.get(node.id, ())
            if depth is not None and len(parts) > depth and node.kind != "output":
                path = ".".join(parts[:depth + 1])
                group = repeats.get(path)
                if group is not None:
                    path = group[0]
                item = folded.get(path)
                if item is None:
                    key = f"m{len(folded)}"
                    cluster = ".".join(parts[:depth]) or None
                    if group is not None:
                        item = Item(key, "repeat", cluster, [], _repeat_title(group), len(group))
                    else:
                        item = Item(key, "module", cluster, [], path)
                    folded[path] = items[key] = item
                item.members.append(node.id)
                key_of[node.id] = item.key
            else:
                key = key_of[node.id] = f"n{node.id}"
                items[key] = Item(key, "node", ".".join(parts) or None, [node.id], node.name)
        edges = {}
        for edge in graph.edges:
            src = key_of.get(edge.src)
            dst = key_of.get(edge.dst)
            if src is None or dst is None or src == dst:
                continue
            edges.setdefault((src, dst), []).append(edge.shape)
        return View(items, edges, [])

    # -- repeated blocks ------------------------------------------------------
    def _repeats_at(self, depth) -> dict:
        """{block path: the block paths of its run} for numbered sibling modules at depth+1
        with identical structure, e.g. layers.0 ... layers.11."""
        if depth is None:
            return {}
        cached = self._repeat_groups.get(depth)
        if cached is not None:
            return cached
        members = {}
        for node in self.visible:
            parts = self.parts.get(node.id, ())
            if len(parts) > depth and node.kind != "output":
                members.setdefault(".".join(parts[:depth + 1]), []).append(node)
        block_of = {node.id: path for path, nodes in members.items() for node in nodes}
        inside = {}  # block path -> its internal edges, found in one pass over the edges
        for edge in self.graph.edges:
            path = block_of.get(edge.src)
            if path is not None and block_of.get(edge.dst) == path:
                inside.setdefault(path, []).append(edge)
        siblings = {}
        for path in members:
            match = _NUMBERED.match(path)
            if match is not None:
                parent = match.group(1) or ""
                index = int(match.group(2) if match.group(2) is not None else match.group(3))
                siblings.setdefault(parent, []).append((index, path))
            call = _CALL.match(path)
            if call is not None:  # calls 2, 3, ... of one module; its first call has no suffix
                siblings.setdefault(call.group(1) + "#", []).append((int(call.group(2)), path))
        for key, blocks in siblings.items():
            if key.endswith("#") and key[:-1] in members:
                blocks.append((1, key[:-1]))
        groups = {}
        for parent, blocks in siblings.items():
            blocks.sort()
            run = []
            previous = None
            for index, path in blocks:
                signature = _block_signature(members[path], path, inside.get(path, ()))
                if run and signature == previous and index == run[-1][0] + 1:
                    run.append((index, path))
                    continue
                _close_run(run, groups)
                run, previous = [(index, path)], signature
            _close_run(run, groups)
        self._repeat_groups[depth] = groups
        return groups


def _placed_modules(graph, visible: list) -> dict:
    """The module path each node is drawn in: its own, except a leaf shared by several calls
    of its module (an RNN cell's weight, used at every step), which goes to the innermost
    module holding all those calls, so each call's cluster holds only that call's ops."""
    placed = {node.id: node.module or "" for node in visible}
    leaves = {node.id for node in visible if node.kind in ("param", "input") and node.module}
    if not leaves:
        return placed
    users = {}
    for edge in graph.edges:
        if edge.src in leaves:
            users.setdefault(edge.src, set()).add(graph.nodes[edge.dst].module or "")
    for node in visible:
        uses = users.get(node.id)
        if node.id not in leaves or not uses or len(uses) < 2 \
                or any(_CALL_NUMBERS.sub("", use) != node.module for use in uses):
            continue
        common = None
        for use in uses:
            parts = use.split(".")
            common = parts if common is None else common[:_shared_prefix(common, parts)]
        placed[node.id] = ".".join(common)
    return placed


def _shared_prefix(a: list, b: list) -> int:
    length = 0
    for x, y in zip(a, b):
        if x != y:
            break
        length += 1
    return length


def _close_run(run: list, groups: dict) -> None:
    if len(run) >= 2:
        paths = [path for _, path in run]
        for path in paths:
            groups[path] = paths


def _repeat_title(paths: list) -> str:
    first, last = paths[0], paths[-1]
    return f"{first} … {last.rpartition('.')[2]}"


def _block_signature(nodes: list, path: str, edges) -> tuple:
    """Structure of a block, independent of its name: kinds, ops, relative module paths,
    names relative to the block, output shapes, and its internal `edges` by position."""
    position = {node.id: index for index, node in enumerate(nodes)}
    prefix = path + "."
    entries = tuple((node.kind, node.function or "", (node.module or "")[len(path):],
                     node.name[len(prefix):] if node.name.startswith(prefix) else
                     (node.name if node.kind == "op" else ""),
                     tuple(None if t is None else (t.shape, t.dtype) for t in node.outputs))
                    for node in nodes)
    inside = sorted((position[edge.src], position[edge.dst], edge.index) for edge in edges)
    return entries, tuple(inside)


# -- chain compression --------------------------------------------------------
def _compress_chains(view: View, graph) -> None:
    """Replace the inside of each long linear run of plain op items by one item, keeping
    both ends; leaves that only feed the inside are folded into it too."""
    runs, leaf_uses = _linear_runs(view, graph)
    if runs:
        _rebuild_edges(view, _fold_runs(view, graph, runs, leaf_uses))


def _linear_runs(view: View, graph) -> tuple:
    """(the runs of MIN_CHAIN or more op items, in drawing order; {leaf item: the items it
    feeds}). A link a -> b is part of a run when a and b are plain op items in one cluster, b
    is a's only successor and a is b's only op input. Only what is needed per item is kept,
    and only while the runs are found: a big graph's view is folded here, the peak of the
    memory its drawing takes."""
    items = view.items
    nodes = graph.nodes
    ops, leaves = set(), set()
    for key, item in items.items():
        if item.kind == "node":
            kind = nodes[item.members[0]].kind
            if kind == "op":
                ops.add(key)
            elif kind in ("param", "input"):
                leaves.add(key)
    leaf_uses = {}
    only_successor, only_op_input = {}, {}  # item -> its one successor / op input; _MANY: several
    for src, dst in view.edges:
        if src in leaves:
            leaf_uses.setdefault(src, []).append(dst)
        only_successor[src] = dst if src not in only_successor else _MANY
        if src in ops:
            only_op_input[dst] = src if dst not in only_op_input else _MANY

    def following(key):
        """The op item after op item `key` in a run, or None."""
        successor = only_successor.get(key)
        if successor is not None and successor is not _MANY and successor in ops \
                and only_op_input.get(successor) == key and items[successor].cluster == items[key].cluster:
            return successor
        return None

    runs = []
    for key in items:  # each run from its start
        if key not in ops:
            continue
        before = only_op_input.get(key)
        if before is not None and before is not _MANY and following(before) == key:
            continue  # inside a run that starts earlier
        # `following` links each item to at most one and from at most one, and a run's start
        # follows none: the runs are disjoint paths, and no walk from a start can loop
        run = [key]
        after = following(key)
        while after is not None:
            run.append(after)
            after = following(after)
        if len(run) >= MIN_CHAIN:
            runs.append(run)
    return runs, leaf_uses


_MANY = object()  # more than one successor, or op input


def _fold_runs(view: View, graph, runs: list, leaf_uses: dict) -> dict:
    """Fold each run's inside into a chain item, and each leaf that feeds only the inside of
    one run (`leaf_uses`: leaf item -> the items it feeds); returns {folded key: chain key}."""
    items = view.items
    redirect = {}
    for number, run in enumerate(runs):
        chain = Item(f"c{number}", "chain", items[run[0]].cluster, [], "")
        for key in run[1:-1]:
            chain.members.extend(items.pop(key).members)
            redirect[key] = chain.key
        items[chain.key] = chain
    for key, item in list(items.items()):  # leaves feeding only the inside of one run
        if item.kind != "node" or graph.nodes[item.members[0]].kind not in ("param", "input"):
            continue
        targets = {redirect.get(dst) for dst in leaf_uses.get(key, ())}
        if len(targets) == 1:
            (chain_key,) = targets
            if chain_key is not None:
                items[chain_key].members.extend(items.pop(key).members)
                redirect[key] = chain_key
    return redirect


def _rebuild_edges(view: View, redirect: dict) -> None:
    edges = {}
    for (src, dst), shapes in view.edges.items():
        src = redirect.get(src, src)
        dst = redirect.get(dst, dst)
        if src not in view.items or dst not in view.items or src == dst:
            continue
        edges.setdefault((src, dst), []).extend(shapes)
    view.edges = edges


def _copy_shared_leaves(view: View, graph) -> None:
    """Draw a leaf feeding SHARED_LEAF_USES or more items once beside each of them.

    One node wired to far-apart uses (a weight reused at every step of an unrolled
    loop) makes dot's crossing minimisation take minutes on a few hundred nodes;
    copies keep it linear, and their labels say the leaf is shared.
    """
    consumers = {}
    for src, dst in view.edges:
        consumers.setdefault(src, []).append(dst)
    items = view.items
    for key, targets in consumers.items():
        item = items[key]
        if len(targets) < SHARED_LEAF_USES or item.kind != "node" or \
                graph.nodes[item.members[0]].kind not in ("param", "input"):
            continue
        del items[key]
        home = graph.nodes[item.members[0]].module
        for use, dst in enumerate(targets):
            copy_key = f"{key}u{use}"
            cluster = items[dst].cluster
            # beside a use in one call of the leaf's own module ("cell#2.inp" for cell.inp's
            # weight): inside that call's cluster; elsewhere where the leaf itself is drawn
            if not home or not cluster or _CALL_NUMBERS.sub("", cluster) != home:
                cluster = item.cluster
            items[copy_key] = Item(copy_key, "node", cluster, item.members, item.title,
                                   uses=(use + 1, len(targets)))
            view.edges[(copy_key, dst)] = view.edges.pop((key, dst))


def _nearest_outputs(view: View, graph, max_nodes: int) -> View:
    """Keep the `max_nodes` items closest to the outputs (breadth first, against the edges)."""
    predecessors = {}
    for src, dst in view.edges:
        predecessors.setdefault(dst, []).append(src)
    roots = [key for key, item in view.items.items()
             if item.kind == "node" and graph.nodes[item.members[0]].kind == "output"]
    keep = dict.fromkeys(roots[:max_nodes])
    queue = deque(keep)
    while queue and len(keep) < max_nodes:
        for src in predecessors.get(queue.popleft(), ()):
            if src not in keep:
                keep[src] = None
                queue.append(src)
                if len(keep) >= max_nodes:
                    break
    dropped = len(view.items) - len(keep)
    view.items = {key: item for key, item in view.items.items() if key in keep}
    view.edges = {pair: shapes for pair, shapes in view.edges.items()
                  if pair[0] in keep and pair[1] in keep}
    view.notes.append(f"only the {len(keep):,} items nearest the outputs are drawn "
                      f"({dropped:,} more not shown); use focus= to look elsewhere")
    return view
