"""`render`: draw a Graph (or the graph behind a tensor) to SVG, PNG, PDF or DOT.

>>> import genesis, tempfile, os
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> path = render(x * 2 + 3, os.path.join(tempfile.mkdtemp(), "graph.svg"))
>>> open(path).read().count("MulBackward")
2
"""
from __future__ import annotations

import sys
from pathlib import Path

from genesis.debug.capture import as_graph

from .backends import EMBEDDED, EMBEDDED_MAX_NODES, choose_backend, run_graphviz
from .collapse import DEFAULT_MAX_NODES
from .dot import to_dot

__all__ = ["render", "render_svg", "FORMATS"]

FORMATS = ("svg", "png", "pdf", "dot")


def render(graph_or_tensor, path, format: str | None = None, **options) -> Path:
    """Write a picture of a `genesis.debug.Graph` (or of the graph behind a Tensor, captured
    first) to `path`. `format` defaults to the file's suffix, else svg; `options` are those
    of `to_dot`. Returns the path written."""
    path = Path(path)
    if format is None:
        format = path.suffix.lstrip(".").lower() if path.suffix.lstrip(".").lower() in FORMATS else "svg"
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    graph = _as_graph(graph_or_tensor, sys._getframe(1).f_locals)
    if format == "dot":
        path.write_text(to_dot(graph, **options).source, encoding="utf-8")
        return path
    backend = choose_backend(format)
    path.write_bytes(run_graphviz(to_dot(graph, **_fit(options, backend)).source, format, backend))
    return path


def render_svg(graph_or_tensor, **options) -> str:
    """The SVG text of a drawing (what notebooks show inline)."""
    graph = _as_graph(graph_or_tensor, sys._getframe(1).f_locals)
    backend = choose_backend("svg")
    return run_graphviz(to_dot(graph, **_fit(options, backend)).source, "svg", backend).decode("utf-8")


def _fit(options: dict, backend: str) -> dict:
    """Keep drawings for the embedded Graphviz within what its stack can lay out."""
    if backend != EMBEDDED:
        return options
    budget = options.get("max_nodes", DEFAULT_MAX_NODES)
    return {**options, "max_nodes": EMBEDDED_MAX_NODES if budget is None else min(budget, EMBEDDED_MAX_NODES)}


def _as_graph(value, namespace: dict):
    try:
        return as_graph(value, namespace)
    except TypeError:
        raise TypeError(f"render takes a genesis.debug.Graph or a Tensor, got "
                        f"{type(value).__name__}") from None
