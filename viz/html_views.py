"""`draw_views`: the drawings of one Graph that the HTML viewer switches between.

A graph is laid out at each collapse depth (modules folded below depth 0, 1,
..., then every node), without and with the tensors saved for backward, each
within a node budget. Past `ALL_DEPTHS` levels of modules only depths 0, 1, 2,
4, 8, ... are drawn: a model of 100 nested modules gets 9 drawings, not 101.
Drawings that come out the same are kept once. Every
drawing records which graph node ids each drawn item stands for, so the page
can go from a click to the node's data and from a node (a finding, a search
hit) to where it is drawn.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> graph = genesis.debug.capture_graph((x * x).sum())
>>> [(view.label, view.saved, view.items) for view in draw_views(graph)]
[('all nodes', False, 4), ('all nodes', True, 6)]
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .backends import EMBEDDED, EMBEDDED_MAX_NODES, choose_backend, run_graphviz_all
from .collapse import build_view
from .dot import view_to_dot
from .svg_clean import clean_svg

__all__ = ["DrawnView", "draw_views", "collapse_depths", "HTML_MAX_NODES"]

HTML_MAX_NODES = 5000  # drawn items per view; a browser pans and zooms this many smoothly
ALL_DEPTHS = 8         # models nested this deep or less are drawn at every collapse depth
_SIZE = re.compile(r'<svg [^>]*data-width="([\d.e+]+)" data-height="([\d.e+]+)"')


@dataclass
class DrawnView:
    """One laid-out drawing: what it shows, the clean SVG, and the node ids behind its items."""

    label: str
    depth: int | None                 # collapse_depth asked for (None: every node)
    saved: bool                       # saved tensors drawn
    items: int                        # drawn items
    notes: list                       # what the budget folded, as the picture says it
    plain: list                       # ids drawn as their own item (data-key "n<id>" or "n<id>u<k>")
    groups: dict = field(default_factory=dict)  # key of a folded item -> {kind, title, members}
    svg: str = ""
    width: float = 0.0                # size of the drawing in SVG units (points)
    height: float = 0.0

    def to_dict(self) -> dict:
        """What the page keeps of a view besides its SVG."""
        return {"label": self.label, "depth": self.depth, "saved": self.saved, "items": self.items,
                "notes": list(self.notes), "plain": self.plain, "groups": self.groups,
                "width": self.width, "height": self.height}


def draw_views(graph, *, max_nodes: int = HTML_MAX_NODES) -> list:
    """Lay out `graph` at its collapse depths (`collapse_depths`), without and with saved
    tensors (when it has any), coarsest first; each drawing holds at most `max_nodes` items
    (the budget folds more where needed, and the view's notes say so)."""
    backend = choose_backend("svg")
    if backend == EMBEDDED:
        max_nodes = min(max_nodes, EMBEDDED_MAX_NODES)
    depth = max((len(node.module.split(".")) for node in graph.nodes if node.module), default=0)
    savings = (False, True) if any(node.kind == "saved" for node in graph.nodes) else (False,)
    views, seen = [], set()
    for saved in savings:
        for collapse_depth in [*collapse_depths(depth), None]:
            view = build_view(graph, collapse_depth=collapse_depth, show_saved=saved, max_nodes=max_nodes)
            signature = (saved, tuple((key, tuple(item.members)) for key, item in view.items.items()))
            if signature in seen:
                continue
            seen.add(signature)
            views.append((_describe(view, collapse_depth, saved), view))
    failures = {}
    svgs = run_graphviz_all([view_to_dot(graph, view).source for _, view in views], "svg", backend,
                            failures=failures)
    if len(failures) == len(views):  # nothing to show: the page can't be drawn
        raise failures[0]
    drawn_views = []
    for index, ((drawn, _), svg) in enumerate(zip(views, svgs)):
        if svg is None:
            continue
        drawn.svg = clean_svg(svg)
        size = _SIZE.match(drawn.svg)
        drawn.width, drawn.height = float(size.group(1)), float(size.group(2))
        drawn_views.append(drawn)
    if failures:  # the page keeps the drawings that could be made, and says which are missing
        left_out = "; ".join(_named(views[index][0]) + f": {error}"
                             for index, error in sorted(failures.items()))
        for drawn in drawn_views:
            drawn.notes.append(f"not drawn: {left_out}")
    return drawn_views


def _named(drawn: DrawnView) -> str:
    return drawn.label + (" with saved tensors" if drawn.saved else "")


def collapse_depths(depth: int) -> list:
    """The collapse depths drawn for modules nested `depth` levels deep: all of them up to
    `ALL_DEPTHS`, else 0, 1, 2, 4, 8, ... (each drawing folds about half as much as the next).

    >>> collapse_depths(3), collapse_depths(100)
    ([0, 1, 2], [0, 1, 2, 4, 8, 16, 32, 64])
    """
    if depth <= ALL_DEPTHS:
        return list(range(depth))
    return [0] + [1 << power for power in range(depth.bit_length()) if 1 << power < depth]


def _describe(view, collapse_depth: int | None, saved: bool) -> DrawnView:
    plain, groups = [], {}
    for key, item in view.items.items():
        if item.kind != "node":
            groups[key] = {"kind": item.kind, "title": item.title, "members": item.members}
        elif item.uses is None or item.uses[0] == 1:  # a shared leaf's copies are one node
            plain.append(item.members[0])
    if collapse_depth is None:
        label = "all nodes"
    elif collapse_depth == 0:
        label = "modules folded"
    else:
        label = f"modules folded below depth {collapse_depth}"
    return DrawnView(label, collapse_depth, saved, len(view.items), list(view.notes), plain, groups)
