"""`clean_svg`: Graphviz SVG made safe and compact for inlining in the HTML viewer.

Only drawing elements and presentation attributes survive (a whitelist), so no
script, event handler, link or foreign content can get through, whatever the
labels held. Tooltip links are unwrapped (the viewer's side panel shows the
same facts), ids are dropped (they could clash with the page's), each drawn
node's and edge's `<title>` becomes a `data-key` / `data-edge` attribute the
viewer finds items by, and the root gets the drawing's size and one
`g.viewport` group, the only thing pan and zoom transform. The font family, size
and centred anchor that nearly every label repeats are left to the page's style
sheet, and empty elements are closed in place (a quarter of a large drawing).

>>> svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 10" onload="alert(1)">'
...        '<g class="graph"><g class="node"><title>n1</title><script>alert(2)</script>'
...        '<a href="javascript:alert(3)"><text x="1">&lt;img src=x&gt;</text></a></g></g></svg>')
>>> clean = clean_svg(svg)
>>> any(word in clean for word in ("script", "onload", "href", "title"))
False
>>> clean[clean.index('<g class="node"'):]
'<g class="node" data-key="n1"><text x="1">&lt;img src=x&gt;</text></g></g></g></svg>'
"""
from __future__ import annotations

from html import escape
from xml.etree import ElementTree

__all__ = ["clean_svg"]

DRAWING_ELEMENTS = frozenset({"svg", "g", "path", "polygon", "polyline", "ellipse", "circle", "rect",
                              "line", "text", "tspan"})
TEXT_ELEMENTS = frozenset({"text", "tspan"})
PRESENTATION_ATTRIBUTES = frozenset({
    "class", "transform", "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
    "stroke-opacity", "opacity", "points", "d", "cx", "cy", "r", "rx", "ry", "x", "y", "x1", "y1",
    "x2", "y2", "width", "height", "text-anchor", "font-size", "font-weight", "font-style",
    "text-decoration"})
STYLE_SHEET_DEFAULTS = {("text-anchor", "middle"), ("font-size", "11.00")}  # viewer.css sets these
# The title of a drawn node or edge names it: its DOT key, or "src->dst" for an edge.
TITLE_ATTRIBUTE = {"node": "data-key", "edge": "data-edge"}


def clean_svg(svg) -> str:
    """Whitelisted, compact SVG text of Graphviz's output (`str` or `bytes`)."""
    root = ElementTree.fromstring(svg)
    if _tag(root) != "svg":
        raise ValueError(f"expected an <svg> document from Graphviz, got <{_tag(root)}>")
    width, height = _size(root.get("viewBox", ""))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" data-width="{width:g}" data-height="{height:g}">'
           '<g class="viewport">']
    for child in root:
        _write(child, out)
    out.append("</g></svg>")
    return "".join(out)


def _write(element, out: list) -> None:
    tag = _tag(element)
    if tag == "a" or (tag == "g" and element.get("id", "").startswith("a_")):
        for child in element:  # a tooltip link, or Graphviz's group around one: keep the drawing
            _write(child, out)
        return
    if tag not in DRAWING_ELEMENTS:
        return
    attributes = "".join(f' {name}="{escape(value)}"' for name, value in element.items()
                         if name in PRESENTATION_ATTRIBUTES and (name, value) not in STYLE_SHEET_DEFAULTS)
    children = list(element)
    title_attribute = TITLE_ATTRIBUTE.get(element.get("class")) if tag == "g" else None
    if title_attribute is not None and children and _tag(children[0]) == "title":
        attributes += f' {title_attribute}="{escape(children[0].text or "")}"'
    if not children and not (tag in TEXT_ELEMENTS and element.text):
        out.append(f"<{tag}{attributes}/>")
        return
    out.append(f"<{tag}{attributes}>")
    if tag in TEXT_ELEMENTS and element.text:
        out.append(escape(element.text, quote=False))
    for child in children:
        _write(child, out)
        if tag in TEXT_ELEMENTS and child.tail:
            out.append(escape(child.tail, quote=False))
    out.append(f"</{tag}>")


def _tag(element) -> str:
    return element.tag.rpartition("}")[2]


def _size(view_box: str) -> tuple:
    parts = view_box.replace(",", " ").split()
    if len(parts) != 4:
        return 0.0, 0.0
    return float(parts[2]), float(parts[3])
