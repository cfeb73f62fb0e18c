"""`to_html`: a trace (or one Graph) as ONE self-contained interactive HTML page.

Everything is inline: the viewer's script and style (`viz/html/`), the data as
JSON in `<script type="application/json">` blocks, and each pre-rendered
drawing as cleaned SVG text. The page opens on what it needs first: the run,
findings and parameters, each graph's views and counts, and one drawing. A
graph's nodes and edges (its JSON form, as in trace.json: 27 MB for 100,000 ops)
and the other drawings stay unparsed text until a click, a search or a view
switch needs them. The page loads nothing from anywhere; its
Content-Security-Policy allows only its own script (by hash), so even a
string that slipped through could not run or fetch. User strings (module and
parameter names, paths, code lines, messages) travel only inside the JSON,
with `<`, `>`, `&` and U+2028/U+2029 escaped, and the viewer puts them into
the page as text, never as markup.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> page = to_html(genesis.debug.capture_graph((x * x).sum()))
>>> page.startswith("<!DOCTYPE html>"), page.count("<script>"), "MulBackward" in page
(True, 1, True)
"""
from __future__ import annotations

import base64
import hashlib
import html
import re
import sys
from dataclasses import replace
from importlib import resources

from genesis.debug.capture import as_graph
from genesis.debug.findings import KINDS
from genesis.debug.graph import Graph
from genesis.debug.json_values import dumps
from genesis.debug.printable import printable
from genesis.debug.trace import Trace

from .html_views import HTML_MAX_NODES, draw_views

__all__ = ["to_html", "notebook_html", "HTML_MAX_NODES"]

# Concatenated in this order inside one function scope (see viewer.js for the entry point).
SCRIPT_FILES = ("dom.js", "pan_zoom.js", "labels.js", "graph_data.js", "drawing.js", "details.js",
                "sidebar.js", "search.js", "training_data.js", "training_chart.js", "training.js",
                "viewer.js")
# The first drawing shown is the finest one with at most this many items whose labels stay
# readable when it is fitted to a screen (a third of their size on a ~1000 x 800 px canvas).
DEFAULT_VIEW_ITEMS = 1500
READABLE_WIDTH, READABLE_HEIGHT = 3000, 2400
NOTEBOOK_MAX_NODES = 1500
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_UNSAFE_IN_SCRIPT = re.compile("[<>&\u2028\u2029]")
WRITE_CHUNK = 1 << 20  # characters of the page encoded and written at a time


def to_html(graph_or_trace, path=None, *, max_nodes: int = HTML_MAX_NODES, title: str | None = None) -> str:
    """The viewer page of a `genesis.debug.Trace`, a `genesis.debug.Graph`, or the graph behind a
    Tensor (captured first); written to `path` too when given. Each graph is laid out at its
    collapse depths (`viz.html_views.draw_views`), with at most `max_nodes` drawn items per
    drawing."""
    pieces = list(_page_pieces(graph_or_trace, sys._getframe(1).f_locals, max_nodes, title))
    if path is not None:
        _write_pieces(path, pieces)
    return "".join(pieces)


def write_html(graph_or_trace, path, *, max_nodes: int = HTML_MAX_NODES, title: str | None = None) -> None:
    """Write `to_html`'s page to `path` a piece at a time, without ever holding the whole page:
    a big graph's JSON goes from the text the graph keeps to the file (what `genesis trace`
    writes its report.html with).

    >>> import genesis, os, tempfile
    >>> x = genesis.tensor([1., 2.], requires_grad=True)
    >>> path = os.path.join(tempfile.mkdtemp(), "graph.html")
    >>> write_html(genesis.debug.capture_graph((x * x).sum()), path)
    >>> open(path, encoding="utf-8").read() == to_html(genesis.debug.capture_graph((x * x).sum()))
    True
    """
    _write_pieces(path, _page_pieces(graph_or_trace, sys._getframe(1).f_locals, max_nodes, title))


def _page_pieces(graph_or_trace, namespace: dict, max_nodes: int, title: str | None):
    """The page's text, in pieces, in order (the big blocks made as they are reached)."""
    data, graphs = _page_data(graph_or_trace, namespace)
    if title is not None:
        data["title"] = title
    blocks = []  # (id, pieces of JSON text safe in a <script>) of the blocks read on demand
    for index, graph in enumerate(graphs):
        graph = _tagged(graph, index, data["findings"])
        views = draw_views(graph, max_nodes=max_nodes)
        data["graphs"].append({
            "ops": sum(1 for node in graph.nodes if node.kind == "op"), "node_count": len(graph.nodes),
            "outputs": [node.id for node in graph.nodes if node.kind == "output"],
            "modules": graph.modules, "steps": graph.steps, "grad_norms": graph.grad_norms,
            "views": [view.to_dict() for view in views], "default_view": _default_view(views)})
        # (escaped a piece at a time: escaping never spans two characters)
        blocks.append((f"graph-{index}", map(_escaped, graph.json_pieces())))
        blocks.extend((f"svg-{index}-{number}", [_escaped(_compact(view.svg))])
                      for number, view in enumerate(views))
    return _page(data, blocks)


def _write_pieces(path, pieces) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for piece in pieces:
            for start in range(0, len(piece), WRITE_CHUNK):  # never a big piece encoded at once
                handle.write(piece[start:start + WRITE_CHUNK])


def notebook_html(graph_or_trace, *, height: int = 640, max_nodes: int = NOTEBOOK_MAX_NODES,
                  **options) -> str:
    """The page inside a sandboxed `<iframe srcdoc>`: what `Graph._repr_html_` shows in a
    notebook (no page shell of its own, and the notebook's styles and scripts stay apart).
    Drawings are kept smaller than in a report file, since the notebook stores the page."""
    page = to_html(graph_or_trace, max_nodes=max_nodes, **options)
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" '
            f'style="width: 100%; height: {int(height)}px; border: 1px solid #ccc" '
            'title="genesis graph viewer"></iframe>')


def _page_data(value, namespace: dict) -> tuple:
    """(the JSON data without graphs, the Graphs to draw) of a Trace, Graph or Tensor."""
    if not isinstance(value, Trace):
        try:
            value = as_graph(value, namespace)
        except TypeError:
            raise TypeError(f"to_html takes a genesis.debug.Trace, a genesis.debug.Graph or a "
                            f"Tensor, got {type(value).__name__}") from None
    if isinstance(value, Graph):
        run = {"script": None}
        return {"title": "genesis graph", "run": run, "graphs": [], "findings": [],
                "parameters": _leaf_rows(value)}, [value]
    run = {"script": value.script, "args": list(value.args), "steps_recorded": value.steps_recorded,
           "steps_seen": value.steps_seen, "exit_code": value.exit_code,
           "script_error": value.script_error, "duration_s": value.duration_s,
           "meta": _page_meta(value.meta)}
    findings = sorted(value.findings, key=lambda finding: finding.sort_key())
    return {"title": f"genesis trace: {value.script}", "run": run, "graphs": [],
            "findings": [finding.to_dict() for finding in findings],
            "parameters": [{"name": row.name, "shape": list(row.shape), "dtype": row.dtype,
                            "grad_norm": row.grad_norm, "grad_norm_step": row.grad_norm_step,
                            "status": row.status, "history": list(row.history),
                            "steps": list(row.steps)} for row in value.parameters]}, \
        list(value.graphs)


def _page_meta(meta: dict) -> dict:
    """What the page reads of a trace's meta: its plain values (the run's table), the
    training history, which stays bounded however long the run, and the torch API the script
    stopped at (the empty findings list names it); not the loss of every step
    (meta["losses"], kept for `genesis diff`), nor the other lists and tables.

    >>> _page_meta({"scaler_skips": 0, "losses": {"steps": [0], "values": [1.0]}, "history": {}})
    {'scaler_skips': 0, 'history': {}}
    """
    return {key: value for key, value in meta.items()
            if key in ("history", "unsupported_torch") or not isinstance(value, dict | list)}


def _leaf_rows(graph) -> list:
    """A parameter table for a bare Graph: each leaf with a gradient-norm history."""
    leaves = {node.name: node for node in graph.nodes if node.kind in ("param", "input")}
    rows = []
    for name, history in graph.grad_norms.items():
        node = leaves.get(name)
        rows.append({"name": name, "shape": list(node.shape) if node is not None and node.shape is not None
                     else None, "dtype": node.dtype if node is not None else None,
                     "grad_norm": history[-1] if history else None,
                     "grad_norm_step": graph.steps[-1] if history and history[-1] is not None else None,
                     "status": None, "history": list(history), "steps": list(graph.steps)})
    return rows


def _tagged(graph, index: int, findings: list):
    """`graph` with each finding's tag on the node it points at (so the drawing marks it),
    copying only the nodes that change."""
    tags = {}
    for finding in findings:
        node = finding["node"]
        if finding["graph"] == index and node is not None and 0 <= node < len(graph.nodes):
            tag = KINDS[finding["kind"]][0]
            if tag not in graph.nodes[node].findings:
                tags.setdefault(node, []).append(tag)
    if not tags:
        return graph
    nodes = list(graph.nodes)
    for node_id, extra in tags.items():
        node = nodes[node_id]
        nodes[node_id] = replace(node, findings=node.findings + list(dict.fromkeys(extra)))
    return replace(graph, nodes=nodes)


def _default_view(views: list) -> int:
    plain = [index for index, view in enumerate(views) if not view.saved]
    fitting = [index for index in plain if views[index].items <= DEFAULT_VIEW_ITEMS
               and views[index].width <= READABLE_WIDTH and views[index].height <= READABLE_HEIGHT]
    return max(fitting, key=lambda index: views[index].items) if fitting else plain[0]


def _page(data: dict, blocks: list):
    """The pieces of the page: its shell, with `data` and each of `blocks` (id, pieces of
    escaped JSON text) in `<script type="application/json">` elements."""
    data = {**data, "title": printable(data["title"])}  # a script path may hold control characters
    asset = resources.files("viz") / "html"
    script = "(function () {\n\"use strict\";\n" + "\n".join(
        (asset / name).read_text(encoding="utf-8") for name in SCRIPT_FILES) + "\n})();\n"
    if "</script" in script.lower():
        raise ValueError("the viewer's script must not contain '</script'")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              "img-src data:; base-uri 'none'; form-action 'none'")
    elements = []
    for name, pieces in [("genesis-data", [_escaped(_compact(data))]), *blocks]:
        elements.append((f'<script type="application/json" id="{name}">', pieces, "</script>\n"))
    parts = {"policy": [html.escape(policy)], "title": [html.escape(data["title"])],
             "style": [(asset / "viewer.css").read_text(encoding="utf-8")], "script": [script]}
    template = (asset / "template.html").read_text(encoding="utf-8")
    pieces = re.split(r"\{\{(\w+)\}\}", template)  # text, name, text, name, ..., text
    for index, text in enumerate(pieces):
        if not index % 2:
            yield text
        elif text == "data":
            for opening, block, closing in elements:
                yield opening
                yield from block
                yield closing
        else:
            yield from parts[text]


def _compact(value) -> str:
    """Strict JSON (`genesis.debug.json_values`), compact."""
    return dumps(value, separators=(",", ":"))


def _escaped(text: str) -> str:
    """JSON text safe inside a <script> element: no `<`, `>`, `&` left raw."""
    return _UNSAFE_IN_SCRIPT.sub(lambda match: _JSON_ESCAPES[match.group()], text)
