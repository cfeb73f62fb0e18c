"""`genesis diff RUN_A RUN_B`: what changed between two traced runs.

    genesis diff genesis-trace/before genesis-trace/after
    genesis diff before/trace.json after/trace.json --json
    genesis diff before after --rtol 1e-3 --html changes.html

RUN_A and RUN_B are trace folders (or their trace.json) written by `genesis trace`. The
console says which ops and parameters were added, removed or reshaped (by module path and
op order), which parameters' gradient norms changed most and from which step, the first
step whose loss differs, and the findings only one run has; or, plainly, that the runs do
not differ. An HTML page (diff.html, or --html FILE) draws the two graphs side by side
with the changed nodes marked. Exit status 0 when the runs agree, 1 when they differ (as
`diff` does), 2 for a usage error (a missing folder, a foreign file).
"""
from __future__ import annotations

import json
from pathlib import Path

import typer

from genesis.debug.printable import printable
from genesis.debug.run_diff import diff_runs
from genesis.utils.atomic_file import describe_write_error, write_atomic
from viz.diff_page import diff_html

from ..ui import make_console, new_table, print_error, print_warning
from .render import UsageError, load_trace

__all__ = ["diff_command"]

_TOP = 10  # gradient-norm rows printed


def diff_command(
    run_a: Path = typer.Argument(..., show_default=False, metavar="RUN_A", help=(
        "The first run: a folder written by `genesis trace`, or its trace.json.")),
    run_b: Path = typer.Argument(..., show_default=False, metavar="RUN_B", help=(
        "The second run, compared with the first.")),
    rtol: float = typer.Option(1e-5, "--rtol", help="Relative tolerance for norms and losses."),
    atol: float = typer.Option(1e-8, "--atol", help="Absolute tolerance for norms and losses."),
    html_path: Path | None = typer.Option(None, "--html", help=(
        "Where to write the HTML page (default: diff.html in the current folder).")),
    no_html: bool = typer.Option(False, "--no-html", help="Write no HTML page."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary instead of tables."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (also: NO_COLOR=1)."),
) -> None:
    """Compare two traced runs: graph structure, gradient norms, loss and findings.

    Examples: genesis diff genesis-trace/before genesis-trace/after;
    genesis diff before/trace.json after/trace.json --json
    """
    out = make_console(no_color=no_color)
    err = make_console(no_color=no_color, stderr=True)
    try:
        trace_a, trace_b = load_trace(run_a), load_trace(run_b)
    except UsageError as error:
        print_error(err, printable(str(error)))
        raise typer.Exit(2) from None
    diff = diff_runs(trace_a, trace_b, rtol=rtol, atol=atol)
    names = (str(run_a), str(run_b))
    if as_json:
        typer.echo(json.dumps({"a": names[0], "b": names[1], **diff.to_dict()}, indent=2))
    else:
        _print_report(out, diff, names)
    if not no_html:
        target = html_path or Path("diff.html")
        try:
            write_atomic(target, diff_html(trace_a, trace_b, diff, names))
        except OSError as error:
            print_warning(err, printable(f"the HTML page was not written: "
                                         f"{describe_write_error(target, error)}"))
        else:
            if not as_json:
                out.print(printable(f"wrote {target}: the two graphs side by side, changes marked"),
                          markup=False)
    raise typer.Exit(1 if diff.differ else 0)


def _print_report(console, diff, names: tuple) -> None:
    for label, name, steps in (("A", names[0], diff.steps_seen[0]), ("B", names[1], diff.steps_seen[1])):
        console.print(printable(f"{label} = {name} ({steps} step{'s' if steps != 1 else ''})"),
                      markup=False)
    scripts = diff.scripts_in_words()
    if scripts is not None:
        console.print(printable(scripts), markup=False)
    steps = diff.steps_in_words()
    if steps is not None:
        console.print(steps, markup=False)
    if not diff.differ:
        console.print(f"The runs do not differ: same graph structure, gradient norms and losses "
                      f"within rtol={diff.rtol:g}, atol={diff.atol:g}, same findings.", markup=False)
        return
    if diff.structure:
        table = new_table("graph", "change", "op", "module", "source", "detail",
                          title="Graph structure", unbroken=("source",))
        for change in diff.structure:
            table.add_row(str(change.graph + 1), change.kind, printable(change.what),
                          printable(_module(change.module)), printable(change.source or ""),
                          printable(change.detail))
        console.print(table)
    else:
        console.print("Graph structure: the same ops, parameters and shapes.", markup=False)
    changed = diff.changed_norms
    if changed:
        table = new_table("parameter", ("first differing step", "right"),
                          ("largest change at", "right"), ("norm in A", "right"),
                          ("norm in B", "right"), ("relative change", "right"),
                          title="Gradient norms (largest relative changes first)")
        for change in changed[:_TOP]:
            table.add_row(printable(change.parameter), str(change.first_step), str(change.step),
                          _number(change.norm_a), _number(change.norm_b),
                          f"{change.max_rel_change:.3g}")
        console.print(table)
        if len(changed) > _TOP:
            console.print(f"... and {len(changed) - _TOP} more parameters whose norms changed",
                          markup=False)
    elif diff.gradient_norms:
        console.print(diff.norms_in_words(), markup=False)
    for label, only in (("A", diff.parameters_only_in_a), ("B", diff.parameters_only_in_b)):
        if only:
            console.print(printable(f"Parameters only in {label}: {', '.join(only)}"), markup=False)
    _print_loss(console, diff.loss)
    for label, found in (("A", diff.findings_only_in_a), ("B", diff.findings_only_in_b)):
        for text in found:
            console.print(printable(f"Finding only in {label}: {text}"), markup=False)


def _print_loss(console, loss) -> None:
    if loss is None:
        console.print("Loss: no step's loss is known in both runs.", markup=False)
    elif loss.first_step is None:
        compared = loss.steps_compared
        same = "at the one step" if compared == 1 else f"at all {compared} steps"
        console.print(f"Loss: the same {same} compared.", markup=False)
    else:
        console.print(f"Loss: first differs at step {loss.first_step}: {_number(loss.loss_a)} in A, "
                      f"{_number(loss.loss_b)} in B.", markup=False)


def _module(path: str | None) -> str:
    """A module path for the table: the top module ("") is named as such."""
    return "" if path is None else path or "(top module)"


def _number(value) -> str:
    return "-" if value is None else f"{value:.6g}"
