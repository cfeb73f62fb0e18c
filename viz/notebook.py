"""Graphs drawn inline in notebooks: importing viz registers this drawing with
genesis.debug, whose Graph then shows its picture (`_repr_svg_`) and viewer (`_repr_html_`).

>>> import viz
>>> from genesis.debug.graph import notebook_drawing
>>> type(notebook_drawing.current).__name__
'VizDrawing'
"""
from __future__ import annotations

from genesis.debug.graph import Graph, notebook_drawing

from .html_report import notebook_html
from .render import render_svg

__all__ = ["VizDrawing"]


class VizDrawing:
    """The `genesis.debug.graph.NotebookDrawing` that viz provides."""

    def svg(self, graph: Graph) -> str:
        return render_svg(graph)

    def html(self, graph: Graph) -> str:
        return notebook_html(graph)


notebook_drawing.register(VizDrawing())
