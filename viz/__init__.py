"""Rendering of captured `genesis.debug.Graph`s with Graphviz (SVG/PNG/PDF) and as an
interactive HTML page.

`to_dot(graph)` builds a `graphviz.Digraph`; `render(graph_or_tensor, path)`
lays it out with the system `dot`, or the embedded WebAssembly Graphviz when
`dot` is not installed (SVG only). Large graphs are folded to a node budget.
`to_html(graph_or_trace, path)` writes one self-contained page to explore a
graph or a whole `genesis trace` run in any browser (`write_html` writes it without holding
the whole page). Importing viz also makes graphs
draw themselves inline in notebooks (viz.notebook).
"""
from .backends import RenderError
from .dot import to_dot
from .html_report import to_html, write_html
from .render import render, render_svg
from .notebook import VizDrawing  # registers the inline notebook drawing of graphs

__all__ = ["to_dot", "render", "render_svg", "to_html", "write_html", "RenderError", "VizDrawing"]
