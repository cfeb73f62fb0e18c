"""Rendering of captured `genesis.debug.Graph`s with Graphviz (SVG/PNG/PDF).

`to_dot(graph)` builds a `graphviz.Digraph`; `render(graph_or_tensor, path)`
lays it out with the system `dot`, or the embedded WebAssembly Graphviz when
`dot` is not installed (SVG only). Large graphs are folded to a node budget.
"""
from .backends import RenderError
from .dot import to_dot
from .render import render, render_svg

__all__ = ["to_dot", "render", "render_svg", "RenderError"]
