"""Colours, shapes and label text of the drawing, with the legend that explains them.

Labels are plain Graphviz strings (the embedded WebAssembly Graphviz has no
HTML-like labels), escaped here and only here: newlines become line breaks, other
control characters visible escapes and lone surrogates U+FFFD
(`genesis.debug.printable`, so neither Graphviz nor an XML parser of its SVG can
choke on a name), then backslashes, quotes and `&` are escaped, and every value is
marked `nohtml` so a name such as `<img src=x>` can never be read as markup.

>>> print(label_text(['a "quoted" <name>', "back\\\\slash & more", "nul\\x00 esc\\x1b"]))
a \\"quoted\\" <name>\\nback\\\\slash &amp; more\\nnul\\\\x00 esc\\\\x1b
"""
from __future__ import annotations

import math

from graphviz import nohtml

from genesis.debug.printable import printable

__all__ = ["FONT", "counted", "NODE_STYLES", "FINDING_STYLES", "label_text", "tooltip_text", "node_attributes",
           "legend_entries", "format_shape", "format_number", "describe_stats"]

FONT = "Helvetica"

# What each kind of drawn node looks like, and its legend entry.
NODE_STYLES = {
    "op":       {"shape": "box", "style": "rounded,filled", "fillcolor": "#F2F2F2", "color": "#7A7A7A",
                 "legend": "op (built-in Function)"},
    "user":     {"shape": "box", "style": "rounded,filled", "fillcolor": "#E4D4F4", "color": "#7B4FA8",
                 "legend": "op of a user-defined Function"},
    "param":    {"shape": "box", "style": "filled", "fillcolor": "#D4EDD4", "color": "#3C8D3C",
                 "legend": "parameter"},
    "input":    {"shape": "box", "style": "filled", "fillcolor": "#D6E6F7", "color": "#3A6EA5",
                 "legend": "input (other leaf)"},
    "output":   {"shape": "box", "style": "filled", "fillcolor": "#FBE3B4", "color": "#B7791F",
                 "peripheries": "2", "legend": "output"},
    "saved":    {"shape": "ellipse", "style": "dashed,filled", "fillcolor": "#FAFAFA", "color": "#9A9A9A",
                 "fontsize": "10", "legend": "tensor saved for backward"},
    "module":   {"shape": "box3d", "style": "filled", "fillcolor": "#FFF6CC", "color": "#A68A00",
                 "legend": "folded module"},
    "repeat":   {"shape": "box3d", "style": "filled,bold", "fillcolor": "#FFEFA0", "color": "#A68A00",
                 "legend": "repeated identical blocks (×N)"},
    "chain":    {"shape": "box", "style": "dashed,rounded", "fillcolor": "#FFFFFF", "color": "#7A7A7A",
                 "legend": "compressed run of ops"},
}

# Findings (tags on nodes, or NaN/Inf seen in statistics) override parts of the kind's style.
FINDING_STYLES = {
    "nan_inf":       {"fillcolor": "#FF9E9E", "color": "#C00000", "penwidth": "2.5",
                      "legend": "NaN/Inf found (NaN values, non-finite gradient)"},
    "grad_mismatch": {"color": "#FF6F00", "penwidth": "3.5",
                      "legend": "gradient mismatch (backward disagrees with finite differences)"},
    "no_grad":       {"style": "dashed,filled", "fontcolor": "#8A8A8A", "color": "#8A8A8A",
                      "legend": "received no gradient"},
    "grad_scale":    {"color": "#C000C0", "penwidth": "2.5",
                      "legend": "exploding or vanishing gradient"},
    "error":         {"fillcolor": "#E8C8FF", "color": "#6A1B9A", "penwidth": "2.5",
                      "legend": "raised in backward, or saved tensor modified in place"},
    "training":      {"color": "#00838F", "penwidth": "2.5",
                      "legend": "training-loop problem (optimizer, zero_grad, scheduler)"},
    "activation":    {"fillcolor": "#E0E0E0", "color": "#455A64", "penwidth": "2.5",
                      "legend": "dead or saturated activations"},
    "diff_only":     {"fillcolor": "#CFE3FA", "color": "#1565C0", "penwidth": "3.5",
                      "legend": "in this run only (genesis diff)"},
    "diff_changed":  {"color": "#1565C0", "penwidth": "3.5",
                      "legend": "changed shape between the runs (genesis diff)"},
}

# Tags checkers may set, mapped to the finding style that draws them.
FINDING_TAGS = {"nan": "nan_inf", "inf": "nan_inf", "nan_inf": "nan_inf", "grad_mismatch": "grad_mismatch",
                "mismatch": "grad_mismatch", "no_grad": "no_grad", "exploding": "grad_scale",
                "vanishing": "grad_scale", "grad_scale": "grad_scale", "error": "error",
                "training": "training", "activation": "activation",
                "diff_only": "diff_only", "diff_changed": "diff_changed"}


def _lines(lines) -> list:
    """The lines, each split at its own line breaks, made printable."""
    return [printable(part) for line in lines for part in str(line).replace("\r\n", "\n").split("\n")]


def label_text(lines) -> nohtml:
    """A node or cluster label: lines escaped and joined by Graphviz line breaks."""
    return nohtml("\\n".join(line.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
                              for line in _lines(lines)))


def tooltip_text(lines) -> nohtml:
    """A tooltip (Graphviz expands escapes in tooltips twice, so backslashes are doubled twice)."""
    return nohtml("\\n".join(line.replace("\\", "\\\\\\\\").replace('"', '\\"').replace("&", "&amp;")
                              for line in _lines(lines)))


def node_attributes(kind: str, findings=()) -> dict:
    """Graphviz attributes for a drawn node of `kind` ('op', 'user', 'param', ...) with findings."""
    attributes = {key: value for key, value in NODE_STYLES[kind].items() if key != "legend"}
    for finding in findings:
        style = FINDING_STYLES.get(finding)
        if style is not None:
            attributes.update((key, value) for key, value in style.items() if key != "legend")
    return attributes


def finding_styles(tags, stats_flag: bool) -> list:
    """Finding styles for a node's tags, plus 'nan_inf' when its statistics counted NaN/Inf."""
    styles = []
    if stats_flag:
        styles.append("nan_inf")
    for tag in tags:
        style = FINDING_TAGS.get(tag)
        if style is not None and style not in styles:
            styles.append(style)
    return styles


def legend_entries(kinds, findings) -> list:
    """(attributes, text) for each node kind and finding present in a drawing, in legend order."""
    entries = [(node_attributes(kind), NODE_STYLES[kind]["legend"]) for kind in NODE_STYLES if kind in kinds]
    for finding, style in FINDING_STYLES.items():
        if finding in findings:
            attributes = node_attributes("op", (finding,))
            entries.append((attributes, style["legend"]))
    return entries


def format_shape(shape) -> str:
    """`(32, 64)`; a scalar is `()`."""
    if shape is None:
        return "?"
    return "(" + ", ".join(str(extent) for extent in shape) + ("," if len(shape) == 1 else "") + ")"


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun, singular for one (thousands separated).

    >>> counted(1, "op"), counted(1_346, "node"), counted(2, "leaf", "leaves")
    ('1 op', '1,346 nodes', '2 leaves')
    """
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def format_number(value) -> str:
    """Compact: 3 significant digits, scientific notation outside [1e-3, 1e4)."""
    if value is None:
        return "–"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e4:
        digits = max(0, 2 - int(math.floor(math.log10(magnitude))))
        return f"{value:.{digits}f}"
    return f"{value:.2e}"


def describe_stats(info, with_values: bool = True, step: int | None = None) -> list:
    """Short lines for a TensorInfo's gradient (and value) statistics; `step`: the backward
    call the gradient is from, when known (a line of its own, so labels grow no wider).

    >>> from genesis.debug import TensorInfo
    >>> describe_stats(TensorInfo((2,), "float32", grad={"norm": 0.0788904, "nan": 0, "inf": 0}), step=4)
    ['grad norm 0.0789', 'at step 4']
    """
    lines = []
    grad = info.grad
    if grad is not None:
        text = f"grad norm {format_number(grad['norm'])}"
        if grad["nan"] or grad["inf"]:
            text += f"  NaN {grad['nan']} Inf {grad['inf']}"
        lines.append(text)
        if step is not None:
            lines.append(f"at step {step}")
    stats = info.stats
    if with_values and stats is not None and (stats["nan"] or stats["inf"]):
        lines.append(f"values: NaN {stats['nan']} Inf {stats['inf']}")
    return lines
