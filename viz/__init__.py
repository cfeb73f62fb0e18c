"""Rendering of captured `genesis.debug.Graph`s: Graphviz (SVG/PNG/PDF) and the HTML viewer."""
