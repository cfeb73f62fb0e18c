"""`genesis trace SCRIPT [ARGS]...`: run a script, capture its graphs, check its gradients,
and report what is wrong — with the op, the module and the source line.

The script runs in a child process (`genesis_cli.traced_run`) that journals what it
captures; this process waits, then writes the outputs and prints the report, whatever
the script did to its own process (changed directory, closed its streams, called
`os._exit`, was killed). Outputs land in the folder `--out` named when the run started.

Exit status: 0 no findings; 1 findings; 2 usage error; 3 the script raised (its
traceback is shown and everything captured is still written); 4 the script made no
backward call, so nothing was checked; a script's own `sys.exit(n)` with n != 0 is
passed on, and a script killed by signal N gives 128 + N (as a shell reports it).
`--json` gives that status as "status", beside the script's own "exit_code"; its JSON is
strict, like trace.json's: a non-finite number (a NaN gradient norm) is the string "NaN",
"Infinity" or "-Infinity".
"""
from __future__ import annotations

import shutil
import sys
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..live_line import LiveLine, wanted as live_line_wanted
from ..supervise import describe_end, run_traced
from ..trace_settings import (CHECKS_PER_SITE, METRICS_FILE, MISSING_TENSORBOARD, PARTIAL_FOLDER,
                              PICTURE_NODES, OutputSettings, tensorboard_installed)
from ..ui import make_console, print_error, print_warning

if TYPE_CHECKING:
    from genesis.debug.trace import Trace

EXIT_FINDINGS, EXIT_USAGE, EXIT_SCRIPT_RAISED, EXIT_NOTHING_CHECKED = 1, 2, 3, 4
FORMATS = ("svg", "png", "pdf", "dot")

# Options before SCRIPT are genesis's (an unknown one is an error that names the closest
# valid option); everything after SCRIPT goes to the script.
CONTEXT = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}


def trace_command(
    script: Path = typer.Argument(..., metavar="SCRIPT",
                                  help="The Python script to run (as `python SCRIPT SCRIPT_ARGS`)."),
    script_args: list[str] = typer.Argument(None, metavar="SCRIPT_ARGS",
                                            help="Arguments for the script (`--` is optional)."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Folder for the outputs (default: genesis-trace/STEM in the "
                                  "current folder, STEM the script's name without .py)."),
    format: str = typer.Option("svg", "--format", "-f", help="Graph picture format: svg, png, pdf or dot."),
    html: bool = typer.Option(True, "--html/--no-html", help="Write the interactive report.html."),
    open_report: bool = typer.Option(False, "--open", help="Open report.html in the default browser."),
    check: bool = typer.Option(True, "--check/--no-check",
                               help="Re-check the backward of user-defined Functions against "
                                    "finite differences, re-run in float64: the calls made before "
                                    f"the first backward, at most {CHECKS_PER_SITE} per Function and "
                                    "source line (the report counts the others)."),
    check_all: bool = typer.Option(False, "--check-all",
                                   help="Also re-check the built-in ops, the same way: the calls "
                                        f"made before the first backward, at most {CHECKS_PER_SITE} per "
                                        "op and source line."),
    anomaly: bool = typer.Option(True, "--anomaly/--no-anomaly",
                                 help="Find where NaN/Inf values are born (forward and backward)."),
    steps: int = typer.Option(1, "--steps", min=1,
                              help="Backward calls to record fully; later ones only update "
                                   "gradient-norm statistics."),
    collapse_depth: int = typer.Option(None, "--collapse-depth", min=0,
                                       help="Fold modules nested deeper than this in the picture."),
    max_nodes: int = typer.Option(PICTURE_NODES, "--max-nodes", min=10,
                                  help="Node budget of the picture; larger graphs are folded to fit."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary on stdout "
                                                       "(the script's own output goes to stderr): "
                                                       "\"status\" is the exit status of genesis trace, "
                                                       "\"exit_code\" the script's."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only a one-line summary."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours in the console report."),
    metrics: bool = typer.Option(True, "--metrics/--no-metrics",
                                 help=f"Write each step's figures to OUT/{METRICS_FILE} as the run "
                                      "goes, one JSON object per line: loss, gradient norm per "
                                      "parameter, update ratios and activation statistics at "
                                      "sampled steps, learning rates, findings so far."),
    tensorboard_dir: Path = typer.Option(None, "--tensorboard", metavar="DIR",
                                         help="Also write them to DIR as TensorBoard scalars, with "
                                              "histograms of the parameters and their gradients at "
                                              "sampled steps (needs the tensorboard extra: pip "
                                              "install 'genesis-autograd[tensorboard]')."),
    torch: bool = typer.Option(False, "--torch",
                               help="Run an unmodified PyTorch script on genesis: `import torch` "
                                    "and its modules are served by genesis for this run; a torch "
                                    "name genesis lacks stops the script with one line that names "
                                    "it (`genesis compat SCRIPT` lists them beforehand)."),
) -> None:
    """Run SCRIPT and report wrong gradients, NaN/Inf origins and parameters without gradient.

    Each finding names its op, module and source line.

    Examples:

      genesis trace train.py

      genesis trace train.py --epochs 2          (arguments after the script go to it)

      genesis trace --steps 3 --check-all --out traces/run1 train.py -- --lr 0.1

      genesis trace --torch pytorch_train.py     (a PyTorch script, run on genesis)
    """
    console = make_console(no_color=no_color, stderr=as_json)
    errors = make_console(no_color=no_color, stderr=True)
    if format not in FORMATS:
        print_error(errors, f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
        raise typer.Exit(EXIT_USAGE)
    script_path = Path(script)
    if not script_path.is_file():
        print_error(errors, f"script not found: {script_path} (give the path of a .py file)")
        raise typer.Exit(EXIT_USAGE)
    if tensorboard_dir is not None:
        tensorboard_dir = _tensorboard_folder(tensorboard_dir, errors)
    args = list(script_args or [])
    if args[:1] == ["--"]:
        args = args[1:]
    folder = Path(out) if out is not None else Path("genesis-trace") / script_path.stem
    folder = folder.absolute()  # where the outputs land, whatever the script does to its cwd
    journal = _journal_folder(folder, errors)

    live = live_line_wanted(quiet=quiet, as_json=as_json) and journal is not None
    records = _records_file(folder, journal, metrics, live)
    options = {"steps": steps, "check": check, "check_all": check_all, "anomaly": anomaly,
               "torch": torch, "metrics": records,
               "tensorboard": str(tensorboard_dir) if tensorboard_dir is not None else None}
    shown = {"shown_script": str(script_path),
             "shown_options": {**options, "format": format, "metrics": metrics}}
    settings = OutputSettings(str(folder), format, html, collapse_depth, max_nodes)
    with LiveLine(records, no_color=no_color) if live else nullcontext() as line:
        script_stream = line.script_stream if live else None
        run = run_traced(str(script_path), args, options, journal,
                         script_stdout=sys.stderr if as_json else script_stream,
                         script_stderr=script_stream,
                         outputs=asdict(settings) if journal is not None else None, shown=shown,
                         while_running=_import_reporting)
    from genesis.debug.json_values import dumps
    from genesis.debug.trace import Trace

    from .trace_outputs import print_problems, write_outputs
    from .trace_report import print_report, summary

    trace = run.trace if run.trace is not None else Trace(script=str(script_path), args=args)
    trace.script = shown["shown_script"]
    trace.meta["options"] = shown["shown_options"]
    if not run.finished:
        trace.meta["finished"] = False
        trace.meta["ended"] = describe_end(run)
    if trace.script_error:  # as python prints it: the same text, on stderr
        sys.stderr.write(trace.script_error.rstrip("\n") + "\n")
        sys.stderr.flush()
    if run.journal_error:
        print_warning(errors, f"the run's journal could not be written ({run.journal_error}); "
                              "a run killed early would have left nothing")

    files, problems = run.files, run.problems
    if files is None:  # the script's process did not write them (it died, or failed to)
        files, problems = write_outputs(trace, settings) if journal is not None else \
            ({"graphs": []}, [])
    print_problems(errors, problems)
    if metrics and records is not None and Path(records).is_file():
        files["metrics"] = records
    if tensorboard_dir is not None:
        files["tensorboard"] = str(tensorboard_dir)
    if files.get("json") and journal is not None:
        shutil.rmtree(journal, ignore_errors=True)  # trace.json holds everything now

    status = _exit_status(trace, run)
    if as_json:
        typer.echo(dumps(summary(trace, files, status), indent=2))
    elif quiet:
        console.print(one_line(trace, folder), soft_wrap=True, markup=False, highlight=False)
    else:
        print_report(console, trace, trace.meta.get("checks", []), files)
    if open_report and "html" in files:
        import webbrowser

        webbrowser.open(Path(files["html"]).resolve().as_uri())
    raise typer.Exit(status)


def _import_reporting() -> None:
    """Import what reports on the run (genesis among it) while the script runs: nothing of
    genesis is imported before, so the script starts sooner (see genesis_cli.trace_settings)."""
    from genesis.debug import json_values, trace  # noqa: F401

    from . import trace_outputs, trace_report  # noqa: F401


def _journal_folder(folder: Path, errors) -> str | None:
    """The run's journal folder inside `folder`, made now; None (with a warning) when the
    output folder can't be written: the run goes on and the report is still printed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        journal = folder / PARTIAL_FOLDER
        if journal.exists():
            shutil.rmtree(journal)  # an earlier run's, killed along with genesis itself
        journal.mkdir()
    except OSError as error:
        why = "it is a file, not a folder" if folder.is_file() else error.strerror or error
        print_warning(errors, f"can't write to the output folder {folder}: {why}."
                              " The script still runs and the report is printed, but no files "
                              "will be saved; pass --out with a writable folder.")
        return None
    return str(journal)


def _tensorboard_folder(folder: Path, errors) -> Path:
    """The --tensorboard folder, made now, before the script runs; exit status 2 when
    tensorboardX is missing or the folder can't be made."""
    if not tensorboard_installed():
        print_error(errors, MISSING_TENSORBOARD)
        raise typer.Exit(EXIT_USAGE)
    folder = Path(folder).absolute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        why = "it is a file, not a folder" if folder.is_file() else error.strerror or error
        print_error(errors, f"--tensorboard: can't make the folder {folder}: {why}")
        raise typer.Exit(EXIT_USAGE) from None
    return folder


def _records_file(folder: Path, journal: str | None, metrics: bool, live: bool) -> str | None:
    """Where the script's process writes the step records: OUT/metrics.jsonl, or with
    --no-metrics a file of the journal (removed with it) for the live line alone; None when
    nothing needs them. An earlier run's metrics.jsonl is removed: the folder holds one run's."""
    if journal is None:
        return None
    try:
        (folder / METRICS_FILE).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only folder: the report names the files that could not be written
    if metrics:
        return str(folder / METRICS_FILE)
    return str(Path(journal) / METRICS_FILE) if live else None


def one_line(trace: Trace, folder: Path) -> str:
    """What `--quiet` prints: the findings (a run whose backward raised has some though no
    backward call completed), how the script ended when not with status 0, the folder.

    >>> from genesis.debug.trace import Trace
    >>> one_line(Trace(script="x.py", exit_code=2), Path("out"))
    'x.py: no backward call completed, nothing checked; script exit status 2; written to out'
    """
    from .trace_report import summary

    counts = summary(trace, {}, 0)["counts"]
    parts = [f"{trace.script}: "]
    if trace.findings:
        kinds = [_count(counts["error"], "error"), _count(counts["warning"], "warning")]
        if counts["info"]:
            kinds.append(f"{counts['info']} info")
        parts.append(f"{_count(len(trace.findings), 'finding')} ({', '.join(kinds)})")
    elif trace.steps_seen == 0:
        parts.append("no backward call completed, nothing checked")
        if trace.meta.get("real_torch"):
            parts.append(" (the script used PyTorch itself: run it with --torch)")
    else:
        parts.append(f"no findings in {_count(trace.steps_seen, 'backward call')}")
    ended = _script_end(trace)
    if ended is not None:
        parts.append(f"; script {ended}")
    parts.append(f"; written to {folder}")
    return "".join(parts)


def _script_end(trace: Trace) -> str | None:
    """How the script ended, in words, unless with exit status 0."""
    if trace.meta.get("finished") is False:
        return trace.meta.get("ended", "did not finish")
    if trace.script_error:
        return f"raised an exception (exit status {trace.exit_code})"
    return f"exit status {trace.exit_code}" if trace.exit_code else None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _exit_status(trace: Trace, run) -> int:
    if run.signal is not None:
        return 128 + run.signal
    if trace.script_error:
        return EXIT_SCRIPT_RAISED
    if trace.exit_code != 0:
        return trace.exit_code
    if not run.finished and run.returncode != 0:
        return run.returncode
    if trace.findings:
        return EXIT_FINDINGS
    return EXIT_NOTHING_CHECKED if trace.steps_seen == 0 else 0
