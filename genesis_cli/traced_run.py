"""The process `genesis trace` runs a script in.

`genesis trace` has `main` called with CONFIG (JSON) in a child process
(`genesis_cli.warm_child`): CONFIG names the script (or the module, with `-m`), its
arguments, the session's options, the journal folder and the file descriptor of a pipe back
to `genesis trace`. This process runs the script as `python SCRIPT ARGS` would (a module as
`python -m MODULE ARGS` would), under a `TraceSession` that journals what it captures;
when the script is done (and the threads it left running have ended) it runs the
gradient checks, writes the outputs (trace.json, pictures, report.html: the graphs are
here, so no copy of a big graph has to cross processes), makes the console report for
`genesis trace`'s consoles (`genesis_cli.commands.trace_ending`: `genesis trace` then never
imports genesis) and sends it, the files written and the script's outcome through the pipe
(the finished `Trace` without its graphs instead, should the report or the files fail),
then exits with the script's exit status.

Whatever the script does to this process (changes directory, replaces or closes the
standard streams, calls `os._exit`, is killed) `genesis trace` itself is untouched:
it reads the journal instead and still reports. `os._exit` brings the journal up to
date before the process ends; a kill leaves it as it was last written. A process the script forks inherits
this one's state; it never journals, and never sends a result.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import pickle
import shutil
import signal
import sys
import threading

from genesis.compat import UNSUPPORTED_ERRORS, is_served, serve_torch
from genesis.debug.journal import Journal
from genesis.debug.session import TraceSession

from .commands.trace_outputs import write_outputs
from .metrics_sinks import MetricsSinks
from .runner import ScriptNotFound, run_module, run_script
from .stop_signals import StopSignals, take_interrupts_once
from .trace_settings import CHECKS_PER_SITE, EndingRequest, OutputSettings
from .warm_child import RESULT_HEADER

__all__ = ["main", "send_result"]


def main(argv: list | None = None) -> None:
    config = json.loads((argv if argv is not None else sys.argv)[1])
    started_in = os.getpid()
    take_interrupts_once()  # a SIGINT sent to the process group comes here twice
    environment = dict(os.environ)  # genesis trace's: the report is made for its consoles
    result_fd = config["result_fd"]
    options = config["options"]
    journal = None
    if config.get("journal"):
        journal = Journal(config["journal"], {"script": _named(config), "args": config["args"],
                                              "options": options})
    session = TraceSession(steps=options["steps"], check=options["check"],
                           check_all=options["check_all"], anomaly=options["anomaly"],
                           journal=journal, replay_dir=(config.get("outputs") or {}).get("folder"),
                           checks_per_site=CHECKS_PER_SITE)
    served = serve_torch() if options.get("torch") else contextlib.nullcontext()
    try:
        sinks = MetricsSinks(options.get("metrics"), options.get("tensorboard"))
    except (ImportError, OSError) as error:  # tensorboardX broken, or its folder unwritable
        _refuse(result_fd, journal, f"--tensorboard: {error}")
    torch_before_script = "torch" in sys.modules  # tensorboardX imports it when installed
    torch_meta = functools.partial(_real_torch_meta, options, torch_before_script)
    try:  # (the sinks close last)
        with sinks, session, _journal_before_exit(session, sinks, torch_meta), served:
            sinks.attach(session)
            outcome = _run_program(config)
            if os.getpid() != started_in:  # a forked copy of this process finished the script
                os._exit(outcome.exit_code)
            _wait_for_threads()  # python waits for them before exiting: the run is not over yet
    except ScriptNotFound as error:  # no module of that name (-m): nothing of it ran
        _refuse(result_fd, journal, f"can't run -m {config['module']}: {error} (check the "
                                    "module's name, and that its package can be imported from "
                                    f"{os.getcwd()}: run genesis trace from the folder that "
                                    "holds it, or give the script's path without -m)")
    # The script is done: what it left (a big graph, and the trace's record of it: millions
    # of objects) is not walked again by each full collection the checks and the outputs set
    # off (0.4 s each at 100,000 ops). What they make and drop is still collected.
    gc.freeze()
    trace = _checked_result(session, config, outcome)
    # the graphs go with `trace` as this returns, not in a collection at exit; what the session
    # kept of the autograd nodes (a 100,000-op graph: 10 MB) goes now, before the outputs'
    # drawings are made and Graphviz runs beside this process
    session.release()
    trace.meta.update(torch_meta(trace.steps_seen))
    if isinstance(outcome.error, UNSUPPORTED_ERRORS):
        trace.meta["unsupported_torch"] = {"name": outcome.error.torch_name,
                                           "where": outcome.error.where}
    trace.script = config.get("shown_script", trace.script)
    trace.meta["options"] = config.get("shown_options", options)
    files, problems = _written_outputs(trace, config.get("outputs"))
    problems = sinks.problems() + problems
    journal_error = _journal_error(journal)
    ending = None if files is None else _ending(trace, files, problems, outcome, journal_error,
                                                config.get("ending"), environment)
    try:
        if ending is None:
            sent = {"trace": trace if files is None else trace.without_graphs()}
        else:  # the trace goes too, pickled apart: genesis trace unpickles it only should it
            # have to make the report itself after all (see genesis_cli.commands.trace)
            sent = {"trace": None, "ending": ending,
                    "trace_pickle": pickle.dumps(trace.without_graphs(), pickle.HIGHEST_PROTOCOL)}
        send_result(result_fd, {**sent, "files": files, "problems": problems,
                                "journal_error": journal_error})
    except BrokenPipeError:  # genesis trace is gone (killed): nobody will read the journal
        if files is not None and journal is not None:
            shutil.rmtree(journal.folder, ignore_errors=True)  # the outputs hold it all
    # Ctrl-C (exit code -SIGINT) gives 130, as a shell reports python's end by SIGINT
    sys.exit(128 + signal.SIGINT if isinstance(outcome.error, KeyboardInterrupt)
             else outcome.exit_code)


def _run_program(config: dict):
    """Run the script, or the module with `-m`, as python would; its `ScriptOutcome`."""
    if config.get("module"):
        return run_module(config["module"], config["args"], clear_at_exit=True)
    return run_script(config["script"], config["args"], clear_at_exit=True)


def _named(config: dict) -> str:
    """What ran, as the trace names it when `genesis trace` does not say: the script's path,
    or `-m MODULE`."""
    return f"-m {config['module']}" if config.get("module") else config["script"]


def _refuse(result_fd: int, journal: Journal | None, message: str) -> None:
    """End before the script runs, asking `genesis trace` to print `message` as a usage error:
    the script never started, so there is nothing to report."""
    if journal is not None:
        shutil.rmtree(journal.folder, ignore_errors=True)
    send_result(result_fd, {"refused": message})
    os._exit(2)


class _journal_before_exit:
    """While the script runs, `os._exit` brings the session's journal up to date first (the
    last backward calls' parameter norms and findings, which it writes only every so often,
    and the run's history: report.html's Training view), then ends the process as asked: a
    script that leaves that way loses nothing. The metrics sinks are closed too (the last
    steps' lines are written, TensorBoard's queued events reach the disk). SIGTERM and
    SIGHUP (`genesis trace` passes on those it gets) do the same before they end the
    process (`StopSignals`). SIGKILL gives no process a chance to write: the journal stays
    as it was last written. `meta(steps_seen)` gives more of the trace's meta to write (what
    the finished trace would have had added: `_real_torch_meta`)."""

    def __init__(self, session: TraceSession, sinks: MetricsSinks, meta):
        self.session = session
        self.sinks = sinks
        self.meta = meta
        self.real_exit = os._exit
        self.stops = StopSignals(self._flush)
        self.pid = os.getpid()  # a process the script forks inherits this: it has nothing to write

    def __enter__(self):
        os._exit = self._exit
        self.stops.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        os._exit = self.real_exit
        self.stops.__exit__(*exc_info)

    def _flush(self) -> None:
        if os.getpid() == self.pid:
            self.session.flush_journal(meta=self.meta(self.session.params.steps))
            self.sinks.close()

    def _exit(self, status: int):
        try:
            self._flush()
        finally:
            self.real_exit(status)


def _written_outputs(trace, outputs: dict | None) -> tuple:
    """Write trace.json, the pictures and the report here, where the graphs are (no copy of
    a big graph crosses to `genesis trace`): (files, problems). (None, []) when the writing
    itself failed: `genesis trace` then writes them from the Trace sent to it."""
    if outputs is None:  # the output folder can't be written: nothing to write
        return {"graphs": []}, []
    try:
        return write_outputs(trace, OutputSettings(**outputs))
    except Exception:  # whatever the script left this process in: the supervisor tries again
        return None, []


def _ending(trace, files: dict, problems: list, outcome, journal_error: str | None,
            request: dict | None, environment: dict) -> dict | None:
    """The report `genesis trace` prints and its exit status, made here for its consoles
    (`genesis_cli.commands.trace_ending`) in the environment `genesis trace` started this
    process with (what the script set, NO_COLOR or TERM, is not the terminal's); None when not
    asked for, or when making it failed (whatever the script left this process in):
    `genesis trace` makes it from the trace."""
    if request is None:
        return None
    try:
        os.environ.clear()
        os.environ.update(environment)
        from .commands.trace_ending import rendered_ending
        from .supervise import TracedRun

        # the status this process ends with, as the system reports it (sys.exit(-1): 255)
        run = TracedRun(outcome.exit_code & 0xFF, None, True, journal_error, files, problems)
        return rendered_ending(trace, run, files, problems, EndingRequest(**request))
    except Exception:
        return None


def _checked_result(session: TraceSession, config: dict, outcome):
    """The session's Trace, with a bar on the terminal while the per-node checks run."""
    calls = len(session.invocations.calls) if session.invocations is not None else 0
    result = functools.partial(session.result, script=_named(config), args=config["args"],
                               error=outcome.error, exit_code=outcome.exit_code,
                               script_error=outcome.traceback_text or None)
    if not calls:  # nothing to check: no bar, and no Rich to import while the run waits
        return result()
    from .ui import make_console, progress

    with progress(make_console(stderr=True), "checking gradients", calls) as advance:
        return result(progress=lambda done, total: advance() if 0 < done <= total else None)


def _real_torch_meta(options: dict, torch_before_script: bool, steps_seen: int) -> dict:
    """{"real_torch": True}, for the report to suggest --torch, when genesis saw no backward
    call and the script imported PyTorch itself (its graphs were PyTorch's, not genesis's:
    not served by --torch, nor imported before it ran); else {}."""
    module = sys.modules.get("torch")
    if steps_seen or options.get("torch") or torch_before_script or module is None \
            or is_served(module):
        return {}
    return {"real_torch": True}


def _wait_for_threads() -> None:
    """Join the non-daemon threads the script left running, as the interpreter would at exit."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon and thread.is_alive():
            thread.join()


def _journal_error(journal: Journal | None) -> str | None:
    if journal is None or journal.error is None:
        return None
    return f"{journal.folder}: {journal.error.strerror or journal.error}"


def send_result(fd: int, result: dict) -> None:
    """Write `result` to the pipe `fd`: its length, then the pickle (read by `receive_result`)."""
    payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    with os.fdopen(fd, "wb", closefd=True) as pipe:
        pipe.write(RESULT_HEADER.pack(len(payload)))
        pipe.write(payload)


if __name__ == "__main__":
    main()
