"""The HTML page of `genesis diff`: what changed between two runs, and their graphs side by
side with the changed nodes marked (ops and parameters in one run only, ops whose output
changed shape).

>>> from genesis.debug.trace import Trace
>>> from genesis.debug.run_diff import diff_runs
>>> run = Trace(script="train.py")
>>> page = diff_html(run, run, diff_runs(run, run), ("before", "after"))
>>> "do not differ" in page
True
"""
from __future__ import annotations

import copy
import html

from .render import render_svg

__all__ = ["diff_html"]

_TOP = 20  # rows of a table shown


def diff_html(trace_a, trace_b, diff, names: tuple) -> str:
    """The whole page, self-contained (inline SVG and CSS)."""
    scripts, steps = diff.scripts_in_words(), diff.steps_in_words()
    parts = [f"<h1>genesis diff</h1><p class=runs>A = {_e(names[0])}<br>B = {_e(names[1])}</p>",
             f"<p class=runs>{_e(scripts)}</p>" if scripts else "",
             f"<p class=runs>{_e(steps)}</p>" if steps else "",
             f"<p class=verdict>{_e(_verdict(diff))}</p>"]
    parts += _structure_table(diff) + _norms_table(diff) + _loss_part(diff) + _findings_part(diff)
    parts += _graphs(trace_a, trace_b, diff)
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>genesis diff</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>")


def _verdict(diff) -> str:
    if not diff.differ:
        return (f"The runs do not differ: same graph structure, gradient norms and losses within "
                f"rtol={diff.rtol:g}, atol={diff.atol:g}, same findings.")
    return "The runs differ: see below."


def _structure_table(diff) -> list:
    if not diff.structure:
        return ["<h2>Graph structure</h2><p>Same ops, parameters and shapes.</p>"]
    rows = "".join(f"<tr><td>{change.graph + 1}</td><td>{_e(change.kind)}</td>"
                   f"<td>{_e(change.what)}</td><td>{_e(_module(change.module))}</td>"
                   f"<td>{_e(change.source or '')}</td><td>{_e(change.detail)}</td></tr>"
                   for change in diff.structure[:_TOP * 5])
    return ["<h2>Graph structure</h2><table><tr><th>graph</th><th>change</th><th>op</th>"
            f"<th>module</th><th>source</th><th>detail</th></tr>{rows}</table>"]


def _norms_table(diff) -> list:
    changed = diff.changed_norms
    lines = ["<h2>Gradient norms</h2>"]
    if not changed:
        lines.append(f"<p>{_e(diff.norms_in_words())}</p>")
    else:
        rows = "".join(f"<tr><td>{_e(change.parameter)}</td><td>{change.first_step}</td>"
                       f"<td>{change.step}</td><td>{_number(change.norm_a)}</td>"
                       f"<td>{_number(change.norm_b)}</td><td>{change.max_rel_change:.3g}</td></tr>"
                       for change in changed[:_TOP])
        lines.append("<table><tr><th>parameter</th><th>first differing step</th>"
                     "<th>largest change at step</th><th>norm in A</th><th>norm in B</th>"
                     f"<th>relative change</th></tr>{rows}</table>")
    for label, names in (("A", diff.parameters_only_in_a), ("B", diff.parameters_only_in_b)):
        if names:
            lines.append(f"<p>Only in {label}: {_e(', '.join(names))}</p>")
    return lines


def _loss_part(diff) -> list:
    loss = diff.loss
    if loss is None:
        return ["<h2>Loss</h2><p>No step's loss is known in both runs.</p>"]
    if loss.first_step is None:
        return [f"<h2>Loss</h2><p>Same loss at all {loss.steps_compared} steps compared.</p>"]
    return [f"<h2>Loss</h2><p>First differs at step {loss.first_step}: "
            f"{_number(loss.loss_a)} in A, {_number(loss.loss_b)} in B.</p>"]


def _findings_part(diff) -> list:
    lines = ["<h2>Findings</h2>"]
    if not (diff.findings_only_in_a or diff.findings_only_in_b):
        lines.append("<p>The same findings in both runs.</p>")
    for label, found in (("A", diff.findings_only_in_a), ("B", diff.findings_only_in_b)):
        if found:
            items = "".join(f"<li>{_e(text)}</li>" for text in found)
            lines.append(f"<p>Only in {label}:</p><ul>{items}</ul>")
    return lines


def _graphs(trace_a, trace_b, diff) -> list:
    """The first graph with a change (else the first), A beside B, changes marked."""
    if not trace_a.graphs or not trace_b.graphs:
        return ["<h2>Graphs</h2><p>A run without a recorded graph: nothing to draw.</p>"]
    changed = sorted({change.graph for change in diff.structure if change.kind != "graph"})
    index = changed[0] if changed else 0
    if index >= min(len(trace_a.graphs), len(trace_b.graphs)):
        index = 0
    graph_a, graph_b = copy.deepcopy(trace_a.graphs[index]), copy.deepcopy(trace_b.graphs[index])
    for change in diff.structure:
        if change.graph != index:
            continue
        tag = "diff_changed" if change.kind == "reshaped" else "diff_only"
        if change.node_a is not None:
            graph_a.add_finding(change.node_a, tag)
        if change.node_b is not None:
            graph_b.add_finding(change.node_b, tag)
    drawings = []
    for label, graph in (("A", graph_a), ("B", graph_b)):
        try:
            picture = render_svg(graph)
        except Exception as error:  # Graphviz failing must not lose the rest of the page
            picture = f"<p>could not draw graph {index + 1} of {label}: {_e(str(error))}</p>"
        drawings.append(f"<div class=graph><h3>{label}: graph {index + 1}</h3>{picture}</div>")
    return [f"<h2>Graphs</h2><div class=side>{''.join(drawings)}</div>"]


def _module(path) -> str:
    return "" if path is None else path or "(top module)"


def _number(value) -> str:
    return "-" if value is None else f"{value:.6g}"


def _e(text: str) -> str:
    return html.escape(str(text))


_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.8em; text-align: left; font-size: 0.9em; }
.verdict { font-weight: bold; }
.side { display: flex; gap: 1em; align-items: flex-start; }
.graph { flex: 1; overflow: auto; border: 1px solid #ddd; max-height: 80vh; }
.graph svg { max-width: 100%; height: auto; }
"""
