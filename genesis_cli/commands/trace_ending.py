"""What `genesis trace` prints once the script is done, and its exit status: the script's
traceback (as python prints it), warnings, the files that could not be written, then the
report (or its one line with --quiet, or the JSON summary with --json).

It is made where the finished trace is: in the script's process, which renders it for the
consoles of `genesis trace` (their width, colours and terminal, given in a
`genesis_cli.trace_settings.EndingRequest`) and sends the text back, so `genesis trace`
itself never imports genesis (`rendered_ending`); or in `genesis trace`, from the trace sent
beside that text or from the journal, when the text does not hold or the script's process
died before it could send it (`print_ending`).
"""
from __future__ import annotations

import io
import os
import signal
from pathlib import Path

from rich.console import Console

from genesis.debug.json_values import dumps
from genesis.debug.trace import Trace

from ..trace_settings import EXIT_FINDINGS, EXIT_NOTHING_CHECKED, EXIT_SCRIPT_RAISED, EndingRequest
from ..ui import print_warning
from .trace_outputs import print_problems
from .trace_report import INTERRUPTED, interrupted, print_report, summary, wrote_anything

__all__ = ["print_ending", "rendered_ending", "one_line", "exit_status"]


def print_ending(trace: Trace, run, files: dict, problems: list, request: EndingRequest,
                 console: Console, errors: Console, stdout) -> int:
    """Print the end of the run (`run`: a `genesis_cli.supervise.TracedRun`) on `console`,
    `errors` and `stdout` (the --json summary); returns the exit status of genesis trace."""
    trace.script = request.shown_script
    trace.meta["options"] = request.shown_options
    if trace.script_error:  # as python prints it: the same text, on stderr
        errors.file.write(trace.script_error.rstrip("\n") + "\n")
        errors.file.flush()
    if run.journal_error:
        print_warning(errors, f"the run's journal could not be written ({run.journal_error}); "
                              "a run killed early would have left nothing")
    print_problems(errors, problems)
    files = dict(files)
    if request.records is not None and Path(request.records).is_file():
        files["metrics"] = request.records
    if request.tensorboard is not None:
        files["tensorboard"] = request.tensorboard
    status = exit_status(trace, run)
    if request.as_json:
        if stdout is not None:  # (None: genesis trace was started with its output closed)
            stdout.write(dumps(summary(trace, files, status), indent=2) + "\n")
    elif request.quiet:
        console.print(one_line(trace, Path(request.folder), files), soft_wrap=True, markup=False,
                      highlight=False)
    else:
        print_report(console, trace, trace.meta.get("checks", []), files)
    return status


def rendered_ending(trace: Trace, run, files: dict, problems: list, request: EndingRequest) -> dict:
    """`print_ending`'s text for the consoles `request` describes, from the folder it names:
    {"errors": text, "console": text, "stdout": text, "status": exit status}."""
    texts = {name: io.StringIO() for name in ("errors", "console", "stdout")}
    try:
        here = os.getcwd()
    except OSError:  # the script removed the folder it left this process in
        here = None
    os.chdir(request.cwd)
    try:
        status = print_ending(trace, run, files, problems, request,
                              _capturing(texts["console"], request.out),
                              _capturing(texts["errors"], request.errors), texts["stdout"])
    finally:
        if here is not None:
            os.chdir(here)
    return {**{name: text.getvalue() for name, text in texts.items()}, "status": status}


def _capturing(text: io.StringIO, settings: dict) -> Console:
    """A console writing into `text` as the console `settings` describe would write."""
    return Console(file=text, width=settings["width"], color_system=settings["color_system"],
                   force_terminal=settings["is_terminal"], force_jupyter=False, highlight=False)


def one_line(trace: Trace, folder: Path, files: dict | None = None) -> str:
    """What `--quiet` prints: the findings (a run whose backward raised has some though no
    backward call completed), how the script ended when not with status 0, the folder the
    outputs went to (`files`: what was written; None: not known, the folder is named).

    >>> one_line(Trace(script="x.py", exit_code=2), Path("out"))
    'x.py: no backward call completed, nothing checked; script exit status 2; written to out'
    >>> one_line(Trace(script="x.py"), Path("out"), files={})
    'x.py: no backward call completed, nothing checked; nothing written (the messages above say why)'
    """
    counts = summary(trace, {}, 0)["counts"]
    parts = [f"{trace.script}: "]
    if trace.findings:
        kinds = [_count(counts["error"], "error"), _count(counts["warning"], "warning")]
        if counts["info"]:
            kinds.append(f"{counts['info']} info")
        parts.append(f"{_count(len(trace.findings), 'finding')} ({', '.join(kinds)})")
    elif trace.meta.get("lost"):
        parts.append("nothing checked: what the script's process captured was lost with it")
    elif trace.steps_seen == 0:
        parts.append("no backward call completed, nothing checked")
        if trace.meta.get("real_torch"):
            parts.append(" (the script used PyTorch itself: run it with --torch)")
    else:
        parts.append(f"no findings in {_count(trace.steps_seen, 'backward call')}")
    ended = _script_end(trace)
    if ended is not None:
        parts.append(f"; script {ended}")
    if files is None or wrote_anything(files):
        parts.append(f"; written to {folder}")
    elif files.get("metrics"):
        parts.append(f"; only {files['metrics']} written (the messages above say why)")
    else:
        parts.append("; nothing written (the messages above say why)")
    return "".join(parts)


def _script_end(trace: Trace) -> str | None:
    """How the script ended, in words, unless with exit status 0."""
    if trace.meta.get("finished") is False:
        return trace.meta.get("ended", "did not finish")
    if interrupted(trace):
        return INTERRUPTED
    if trace.script_error:
        return f"raised an exception (its own exit status {trace.exit_code})"
    return f"exit status {trace.exit_code}" if trace.exit_code else None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def exit_status(trace: Trace, run) -> int:
    """The exit status of genesis trace (see `genesis_cli.commands.trace`)."""
    if run.signal is not None:
        return 128 + run.signal
    if interrupted(trace):  # Ctrl-C: 130, as python ends by SIGINT
        return 128 + signal.SIGINT
    if trace.script_error:
        return EXIT_SCRIPT_RAISED
    if trace.exit_code != 0:
        return trace.exit_code
    if not run.finished and run.returncode != 0:
        return run.returncode
    if trace.findings:
        return EXIT_FINDINGS
    return EXIT_NOTHING_CHECKED if trace.steps_seen == 0 else 0
