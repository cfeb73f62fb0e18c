"""`genesis trace SCRIPT [ARGS]...` (or `genesis trace -m MODULE [ARGS]...`, as `python -m`):
run a script, capture its graphs, check its gradients, and report what is wrong — with the
op, the module and the source line.

The script runs in a child process (`genesis_cli.traced_run`) that journals what it
captures, and when the script is done, writes the outputs and makes the report for this
process to print (`genesis_cli.commands.trace_ending`): this process never imports genesis.
When the child could not (the script called `os._exit`, the child was killed), this process
writes the outputs and prints the report from the journal. Whatever the script did to its
own process (changed directory, closed its streams), outputs land in the folder `--out`
named when the run started.

Exit status: 0 no findings; 1 findings; 2 usage error; 3 the script raised (its
traceback is shown and everything captured is still written); 4 nothing was checked:
the script made no backward call (or what it captured was lost: its process died with no
journal to read); a script's own `sys.exit(n)` with n != 0 is
passed on, and a script killed by signal N gives 128 + N (as a shell reports it).
`--json` gives that status as "status", beside the script's own "exit_code"; its JSON is
strict, like trace.json's: a non-finite number (a NaN gradient norm) is the string "NaN",
"Infinity" or "-Infinity".
"""
from __future__ import annotations

import os
import shutil
import sys
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path

import typer

from ..live_line import LiveLine, wanted as live_line_wanted
from ..supervise import describe_end, run_traced
from ..trace_settings import (CHECKS_PER_SITE, EXIT_USAGE, METRICS_FILE, MISSING_TENSORBOARD,
                              PARTIAL_FOLDER, PICTURE_NODES, EndingRequest, OutputSettings,
                              console_settings, tensorboard_installed)
from ..ui import make_console, print_error, print_warning

FORMATS = ("svg", "png", "pdf", "dot")

# Options before SCRIPT (or up to -m MODULE) are genesis's (an unknown one is an error that
# names the closest valid option); everything after SCRIPT (or MODULE) goes to the script.
CONTEXT = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}


def trace_command(
    script: str = typer.Argument(None, metavar="SCRIPT", show_default=False,
                                 help="The Python script to run (as `python SCRIPT SCRIPT_ARGS`); "
                                      "none with -m MODULE."),
    script_args: list[str] = typer.Argument(None, metavar="SCRIPT_ARGS",
                                            help="Arguments for the script or module (`--` is "
                                                 "optional)."),
    module: str = typer.Option(None, "--module", "-m", metavar="MODULE",
                               help="Run the module MODULE instead of a script, as `python -m "
                                    "MODULE SCRIPT_ARGS` does (a package runs its __main__); "
                                    "like python's -m, it ends the options: what follows goes "
                                    "to the module."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Folder for the outputs (default: genesis-trace/STEM in the "
                                  "current folder, STEM the script's name without .py, or "
                                  "MODULE)."),
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
    """Run SCRIPT (or -m MODULE) and report wrong gradients, NaN/Inf origins and parameters without gradient.

    Each finding names its op, module and source line.

    Examples:

      genesis trace train.py

      genesis trace train.py --epochs 2          (arguments after the script go to it)

      genesis trace --steps 3 --check-all --out traces/run1 train.py -- --lr 0.1

      genesis trace --torch pytorch_train.py     (a PyTorch script, run on genesis)

      genesis trace --steps 3 -m mypackage.train --lr 0.1    (a module, as python -m runs it)
    """
    console = make_console(no_color=no_color, stderr=as_json)
    errors = make_console(no_color=no_color, stderr=True)
    if format not in FORMATS:
        print_error(errors, f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
        raise typer.Exit(EXIT_USAGE)
    script_path, shown_script, stem, args = _program(script, module, script_args, errors)
    if tensorboard_dir is not None:
        tensorboard_dir = _tensorboard_folder(tensorboard_dir, errors)
    folder = Path(out) if out is not None else Path("genesis-trace") / stem
    folder = folder.absolute()  # where the outputs land, whatever the script does to its cwd
    made = [path for path in (folder, *folder.parents) if not path.exists()]  # deepest first
    journal = _journal_folder(folder, errors)

    live = live_line_wanted(quiet=quiet, as_json=as_json) and journal is not None
    records = _records_file(folder, journal, metrics, live)
    options = {"steps": steps, "check": check, "check_all": check_all, "anomaly": anomaly,
               "torch": torch, "metrics": records,
               "tensorboard": str(tensorboard_dir) if tensorboard_dir is not None else None}
    shown = {"shown_script": shown_script,
             "shown_options": {**options, "format": format, "metrics": metrics}}
    settings = OutputSettings(str(folder), format, html, collapse_depth, max_nodes)
    ending = EndingRequest(str(folder), shown_script, shown["shown_options"], as_json, quiet,
                           records if metrics else None,
                           str(tensorboard_dir) if tensorboard_dir is not None else None,
                           os.getcwd(), console_settings(console), console_settings(errors))
    with LiveLine(records, no_color=no_color) if live else nullcontext() as line:
        script_stream = line.script_stream if live else None
        run = run_traced(str(script_path) if script_path is not None else None, args, options,
                         journal,
                         script_stdout=_script_output_beside_json() if as_json else script_stream,
                         script_stderr=script_stream,
                         outputs=asdict(settings) if journal is not None else None, shown=shown,
                         ending=asdict(ending), module=module)
    if run.refused is not None:  # the script never ran: nothing to report
        print_error(errors, run.refused)
        _nothing_written(journal, made)
        raise typer.Exit(EXIT_USAGE)
    if not run.started:  # interrupted or killed while genesis loaded: nothing ran
        print_error(errors, f"the script never started: its process {describe_end(run)}, "
                            "while genesis was loading; nothing was run or written")
        _nothing_written(journal, made)
        raise typer.Exit(128 + run.signal if run.signal is not None else run.returncode or 1)
    if _printed(run, ending, console, errors):  # the script's process made the report
        status, files = run.ending["status"], run.files
    else:
        files, status = _ending_here(run, ending, settings, journal, args, console, errors)
    if files.get("json") and journal is not None:
        shutil.rmtree(journal, ignore_errors=True)  # trace.json holds everything now
    if open_report and "html" in files:
        import webbrowser

        webbrowser.open(Path(files["html"]).resolve().as_uri())
    raise typer.Exit(status)


def _program(script: str | None, module: str | None, script_args: list | None,
             errors) -> tuple:
    """What to run, from the command line: (the script's path, or None for a module; how the
    trace names it: the path, or `-m MODULE`; the default output folder's name; the
    arguments it gets). A usage error (exit status 2) when there is nothing to run."""
    args = list(script_args or [])
    if module is not None:  # what the parser took for SCRIPT is the module's first argument
        if not module:
            print_error(errors, "-m needs a module's name, as python's does: genesis trace -m "
                                "package.module")
            raise typer.Exit(EXIT_USAGE)
        args = ([script] if script is not None else []) + args
        script_path, shown, stem = None, f"-m {module}", module
    elif script is None:
        print_error(errors, "give the script to run (genesis trace train.py) or a module "
                            "(genesis trace -m package.module); see genesis trace --help")
        raise typer.Exit(EXIT_USAGE)
    else:
        script_path = Path(script)
        if not script_path.is_file():
            print_error(errors, f"script not found: {script_path} (give the path of a .py file)")
            raise typer.Exit(EXIT_USAGE)
        shown, stem = str(script_path), script_path.stem
    if args[:1] == ["--"]:
        args = args[1:]
    return script_path, shown, stem, args


def _script_output_beside_json():
    """Where the script's standard output goes with --json, which keeps stdout for the JSON:
    to stderr, or nowhere when genesis trace was started with stderr closed."""
    if sys.stderr is not None:
        return sys.stderr
    return open(os.devnull, "w")  # (left to close at exit: this process ends with the run)


def _printed(run, ending: EndingRequest, console, errors) -> bool:
    """Print the report the script's process made, when it holds: that process was not
    killed after sending it (a crash at exit: the exit status says so), the consoles are as
    wide as they were when it was asked for (a terminal resized during the run) and their
    streams can take its characters. False when it was not printed (none was made, or it
    did not hold): genesis trace makes it then."""
    made = run.ending
    if made is None or run.signal is not None or console.width != ending.out["width"] \
            or errors.width != ending.errors["width"]:
        return False
    writes = [(stream, text) for stream, text in ((errors.file, made["errors"]),
                                                  (console.file, made["console"]),
                                                  (sys.stdout, made["stdout"]))
              if text and stream is not None]  # (None: started with that stream closed)
    for stream, text in writes:
        try:
            text.encode(getattr(stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):  # Rich says what to do about it
            return False
    for stream, text in writes:
        stream.write(text)
        stream.flush()
    return True


def _ending_here(run, ending: EndingRequest, settings: OutputSettings, journal: str | None,
                 args: list, console, errors) -> tuple:
    """(files, exit status) of a run whose process did not make the report (it died, or could
    not write the outputs), or made one that does not hold: the outputs are written (unless it
    wrote them) and the report printed from what it sent, or from its journal."""
    import pickle

    from genesis.debug.trace import Trace

    from .trace_ending import print_ending
    from .trace_outputs import write_outputs

    trace = run.trace if run.trace is not None else pickle.loads(run.trace_pickle) \
        if run.trace_pickle is not None else Trace(script=ending.shown_script, args=args)
    trace.script = ending.shown_script  # as the script's process names it in the files it writes
    trace.meta["options"] = ending.shown_options
    if not run.finished:
        trace.meta["finished"] = False
        trace.meta["ended"] = describe_end(run)
        trace.exit_code = run.returncode  # its exit status (os._exit), or -N for signal N
        if run.trace is None:  # it died with no journal to read (an output folder not writable)
            trace.meta["lost"] = True
        elif "history" not in trace.meta and ending.records is not None:
            _history_from_metrics(trace, ending.records)
    files, problems = run.files, run.problems
    if files is None:  # the script's process did not write them (it died, or failed to)
        files, more = write_outputs(trace, settings) if journal is not None else \
            ({"graphs": []}, [])
        problems = [*problems, *more]  # (what it sent: the metrics file's)
    status = print_ending(trace, run, files, problems, ending, console, errors, sys.stdout)
    return files, status


def _nothing_written(journal: str | None, made: list) -> None:
    """Remove the journal of a run that never started, and the folders made for its outputs
    (`made`: deepest first), as long as they hold nothing else."""
    if journal is not None:
        shutil.rmtree(journal, ignore_errors=True)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:  # something else is in it now
            return


def _history_from_metrics(trace, records: str) -> None:
    """The history of a run whose process died before it could write it down (SIGKILL gives
    it no time), rebuilt from its metrics.jsonl for report.html's Training view; the trace
    says where it came from, and what that leaves out. Its count of backward calls is raised
    to the lines' (the journal, written every so often, may hold fewer steps than they do)."""
    from genesis.debug.run_history import history_from_records

    from ..metrics_sinks import read_records

    try:
        lines = read_records(records)
    except (OSError, ValueError):  # unreadable: the report goes without the Training view
        return
    if lines:
        trace.meta["history"] = history_from_records(lines)
        trace.steps_seen = max(trace.steps_seen, trace.meta["history"]["steps_seen"])
        trace.meta["history_from"] = (f"{METRICS_FILE}: the script's process was killed before "
                                      "it could write its history (no value distributions or "
                                      "activations)")


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
