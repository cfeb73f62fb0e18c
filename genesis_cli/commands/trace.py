"""`genesis trace SCRIPT [ARGS]...`: run a script, capture its graphs, check its gradients,
and report what is wrong — with the op, the module and the source line.

Exit status: 0 no findings; 1 findings; 2 usage error; 3 the script raised (its
traceback is shown and everything captured is still written); a script's own
`sys.exit(n)` with n != 0 is passed on (after the report is written).
"""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import typer

from genesis.debug.session import TraceSession

from ..runner import run_script
from ..ui import make_console, print_error, print_warning, progress
from .trace_report import print_report, summary

EXIT_FINDINGS, EXIT_USAGE, EXIT_SCRIPT_RAISED = 1, 2, 3
FORMATS = ("svg", "png", "pdf", "dot")

CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True,
           "help_option_names": ["-h", "--help"]}


def trace_command(
    script: Path = typer.Argument(..., help="The Python script to run (as `python SCRIPT ARGS`)."),
    script_args: list[str] = typer.Argument(None, metavar="[SCRIPT_ARGS]...",
                                            help="Arguments for the script (`--` is optional)."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Folder for the outputs [default: ./genesis-trace/<script-stem>/]."),
    format: str = typer.Option("svg", "--format", "-f", help="Graph picture format: svg, png, pdf or dot."),
    html: bool = typer.Option(True, "--html/--no-html", help="Write the interactive report.html."),
    open_report: bool = typer.Option(False, "--open", help="Open report.html in the default browser."),
    check: bool = typer.Option(True, "--check/--no-check",
                               help="Re-check each user-defined Function's backward against finite "
                                    "differences (float64, first recorded step)."),
    check_all: bool = typer.Option(False, "--check-all", help="Also re-check every built-in op."),
    anomaly: bool = typer.Option(True, "--anomaly/--no-anomaly",
                                 help="Find where NaN/Inf values are born (forward and backward)."),
    steps: int = typer.Option(1, "--steps", min=1,
                              help="Backward calls to record fully; later ones only update "
                                   "gradient-norm statistics."),
    collapse_depth: int = typer.Option(None, "--collapse-depth", min=0,
                                       help="Fold modules nested deeper than this in the picture."),
    max_nodes: int = typer.Option(500, "--max-nodes", min=10,
                                  help="Node budget of the picture; larger graphs are folded to fit."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary on stdout "
                                                       "(the script's own output goes to stderr)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only a one-line summary."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours in the console report."),
) -> None:
    """Run SCRIPT under genesis and report wrong gradients, NaN/Inf origins and parameters
    without gradient, with the op, module and source line of each.

    Examples:

      genesis trace train.py

      genesis trace train.py --epochs 2          (arguments after the script go to it)

      genesis trace --steps 3 --check-all --out traces/run1 train.py -- --lr 0.1
    """
    console = make_console(no_color=no_color, stderr=as_json)
    if format not in FORMATS:
        print_error(console, f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
        raise typer.Exit(EXIT_USAGE)
    script_path = Path(script)
    if not script_path.is_file():
        print_error(console, f"script not found: {script_path} (give the path of a .py file)")
        raise typer.Exit(EXIT_USAGE)
    args = [arg for arg in (script_args or [])]
    if args[:1] == ["--"]:
        args = args[1:]
    folder = Path(out) if out is not None else Path("genesis-trace") / script_path.stem
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print_error(console, f"can't create the output folder {folder}: {error.strerror}")
        raise typer.Exit(EXIT_USAGE) from None

    session = TraceSession(steps=steps, check=check, check_all=check_all, anomaly=anomaly)
    redirect = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    with redirect, session:
        outcome = run_script(str(script_path), args)
    if outcome.raised:
        console.print(outcome.traceback_text.rstrip(), markup=False, highlight=False)

    with progress(console, "checking gradients", max(len(session.invocations.calls)
                                                     if session.invocations else 0, 1)) as advance:
        trace = session.result(
            script=str(script_path), args=args, error=outcome.error, exit_code=outcome.exit_code,
            script_error=outcome.traceback_text or None,
            progress=lambda done, total: advance() if 0 < done <= total else None)
    trace.meta.update({"options": {"steps": steps, "check": check, "check_all": check_all,
                                   "anomaly": anomaly, "format": format}})
    files = _write_outputs(trace, folder, format, html, collapse_depth, max_nodes, console)

    if as_json:
        typer.echo(json.dumps(summary(trace, files), indent=2))
    elif quiet:
        counts = summary(trace, files)["counts"]
        console.print(f"{script_path}: {len(trace.findings)} finding(s) ({counts['error']} "
                      f"errors, {counts['warning']} warnings); written to {folder}",
                      soft_wrap=True, markup=False, highlight=False)
    else:
        print_report(console, trace, session.check_results, files)
    if open_report and "html" in files:
        import webbrowser

        webbrowser.open(Path(files["html"]).resolve().as_uri())
    raise typer.Exit(_exit_status(trace, outcome))


def _exit_status(trace, outcome) -> int:
    if outcome.raised:
        return EXIT_SCRIPT_RAISED
    if outcome.exited and outcome.exit_code != 0:
        return outcome.exit_code
    return EXIT_FINDINGS if trace.findings else 0


def _write_outputs(trace, folder: Path, format: str, html: bool, collapse_depth, max_nodes,
                   console) -> dict:
    """trace.json, one picture per distinct graph (graph.svg, graph-2.svg, ...) and report.html.
    A rendering problem is reported and the other files are still written."""
    from viz import RenderError, render

    files = {}
    path = folder / "trace.json"
    path.write_text(trace.to_json(indent=1), encoding="utf-8")
    files["json"] = str(path)
    pictures = []
    if trace.graphs:
        for index, graph in enumerate(trace.graphs):
            name = "graph" if index == 0 else f"graph-{index + 1}"
            target = folder / f"{name}.{format}"
            try:
                render(graph, target, format=format, collapse_depth=collapse_depth,
                       max_nodes=max_nodes)
            except (RenderError, OSError) as error:
                print_warning(console, f"could not draw {target.name}: {error}")
                continue
            pictures.append(str(target))
    files["graphs"] = pictures
    if html:
        from viz import to_html

        target = folder / "report.html"
        try:
            to_html(trace, target)
            files["html"] = str(target)
        except (RenderError, OSError) as error:
            print_warning(console, f"could not write {target.name}: {error}")
    return files
