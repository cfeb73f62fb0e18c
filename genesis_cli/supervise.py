"""Run a script under tracing in a child process and collect what it captured.

`genesis trace` stays a small supervisor: it has `genesis_cli.traced_run` run the script
in a child process (`genesis_cli.warm_child`, usually started before this process
imported genesis; the script runs there as `python SCRIPT ARGS` would, a module as
`python -m MODULE ARGS` would, with this
process's standard input, output and error), waits for it, and takes the finished
`Trace` from a pipe. When the child ends without sending one (`os._exit`, a signal such
as SIGKILL from the out-of-memory killer, a crash in native code) the journal it kept is
read instead, so what was captured is still reported.

The script's output goes straight to this process's terminal or file. Only when this
process's own `sys.stdout`/`sys.stderr` are not real files (a test runner capturing
them, a notebook) is the child's output piped and copied into them.
"""
from __future__ import annotations

import codecs
import os
import pickle
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .warm_child import RESULT_HEADER, WarmChild, take

if TYPE_CHECKING:  # imported only once the script runs (see genesis_cli.trace_settings)
    from genesis.debug.trace import Trace

__all__ = ["TracedRun", "run_traced", "describe_end"]


@dataclass
class TracedRun:
    """How the traced script's process ended, and what it captured.

    `trace` is the finished Trace when the child sent one; otherwise what its journal
    held (marked unfinished), or None when there was no journal to read, or when the child
    sent the report it made instead (`ending`: {"errors", "console", "stdout": text to
    print on each, "status": the exit status}; the Trace comes pickled beside it, in
    `trace_pickle`, for when that report can't be used).
    """

    returncode: int                 # the child's: its exit status, or -N for signal N
    trace: Trace | None
    finished: bool                  # the child sent its finished trace
    journal_error: str | None = None
    files: dict | None = None       # the outputs the child wrote (None: it wrote none)
    problems: list = field(default_factory=list)  # (severity, message) of outputs not written
    ending: dict | None = None      # what to print and the exit status, made by the child
    trace_pickle: bytes | None = None  # with `ending`: the Trace, pickled, should it be needed
    refused: str | None = None      # why the child ended before running the script (a usage error)
    started: bool = True            # the script started (False: its process ended before)

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 else None


def run_traced(script: str | None, args: list, options: dict, journal: str | None,
               script_stdout=None, outputs: dict | None = None, shown: dict | None = None,
               script_stderr=None, ending: dict | None = None,
               module: str | None = None) -> TracedRun:
    """Run `script` traced in a child process, or with `module` (and `script` None) that module,
    as `python -m MODULE` would; `script_stdout` and `script_stderr` are where
    its standard output and error go (default: this process's). `outputs` (an
    `OutputSettings` as a dict) asks the child to write the files itself; `shown`
    ({"shown_script", "shown_options"}) is how the trace names the script and its options.
    `ending` (an `EndingRequest` as a dict) asks the child to make the report too, for this
    process to print (`TracedRun.ending`); it sends no trace then."""
    config = {"script": os.path.abspath(script) if script is not None else None,
              "module": module, "args": list(args), "options": options,
              "journal": journal, "outputs": outputs, "ending": ending, **(shown or {})}
    out_stream = script_stdout if script_stdout is not None else sys.stdout
    streams = [out_stream, script_stderr if script_stderr is not None else sys.stderr]
    for stream in streams:
        if stream is not None:
            stream.flush()  # what this process printed comes before the script's output
    read_end, write_end = os.pipe()
    targets, relays, ours = [], [], [write_end]
    for stream in streams:
        if stream is None:  # this process has no such stream (closed when it started)
            discard = os.open(os.devnull, os.O_WRONLY)
            targets.append(discard)
            ours.append(discard)
        elif _has_descriptor(stream):
            targets.append(stream.fileno())
        else:  # a stream without a descriptor (a test runner's): copied from a pipe
            pipe_read, pipe_write = os.pipe()
            targets.append(pipe_write)
            ours.append(pipe_write)
            relays.append(_Relay(os.fdopen(pipe_read, "rb"), stream))
    try:
        child = _child_running(config, targets, write_end)
    finally:
        for fd in ours:  # the child has its copies
            os.close(fd)
    received = _Receiver(read_end)
    with _signals_passed_to(child):
        returncode = child.wait()
    for relay in relays:
        relay.join()
    result = received.result(wait=10.0 if returncode == 0 or returncode > 0 else 0.5)
    if result is not None and result.get("refused"):
        return TracedRun(returncode, None, False, refused=result["refused"])
    if result is not None:
        return TracedRun(returncode, result["trace"], True, result.get("journal_error"),
                         result.get("files"), result.get("problems", []), result.get("ending"),
                         result.get("trace_pickle"))
    trace = None
    if journal is not None:
        from genesis.debug.journal import JOURNAL_FILE, read_journal
        if not os.path.exists(os.path.join(journal, JOURNAL_FILE)):  # made before the script runs
            return TracedRun(returncode, None, False, started=False)
        try:
            trace = read_journal(journal)
        except (OSError, ValueError):
            trace = None
    return TracedRun(returncode, trace, False)


def _child_running(config: dict, targets: list, result_fd: int):
    """The child process, given its orders: the one prestarted for this run, or a new one
    when there is none or it died before the orders came."""
    prestarted = take()
    if prestarted is not None:
        try:
            return prestarted.run(config, *targets, result_fd)
        except OSError:  # gone (killed while it imported): start another
            prestarted.discard()
    return WarmChild.started().run(config, *targets, result_fd)


def describe_end(run: TracedRun) -> str:
    """How an unfinished run ended, in words.

    >>> describe_end(TracedRun(-9, None, False))
    'was killed by SIGKILL (signal 9; the out-of-memory killer sends it too)'
    >>> describe_end(TracedRun(0, None, False))
    'ended with exit status 0 before genesis could finish (os._exit, or a crash in native code)'
    """
    if run.signal is not None:
        try:
            name = signal.Signals(run.signal).name
        except ValueError:
            name = f"signal {run.signal}"
        hint = "; the out-of-memory killer sends it too" if run.signal == signal.SIGKILL else ""
        return f"was killed by {name} (signal {run.signal}{hint})"
    return (f"ended with exit status {run.returncode} before genesis could finish (os._exit, or "
            "a crash in native code)")


class _Receiver:
    """Reads the child's result from the pipe on a thread (the child blocks writing until it
    is read), so a result larger than the pipe's buffer never deadlocks the wait. The bytes
    are unpickled by `result()`, on the caller's thread: unpickling imports genesis's
    modules, which the main thread may be importing at the same time (two threads importing
    the same modules can deadlock)."""

    def __init__(self, read_end: int):
        self._pipe = os.fdopen(read_end, "rb")
        self._payload = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            header = self._pipe.read(RESULT_HEADER.size)
            if len(header) == RESULT_HEADER.size:
                (length,) = RESULT_HEADER.unpack(header)
                payload = self._pipe.read(length)
                if len(payload) == length:
                    self._payload = payload
        except OSError:
            self._payload = None

    def result(self, wait: float):
        """The result, waiting up to `wait` seconds for the rest of it (a process the script
        forked may hold the pipe open, so the end of the pipe is not waited for)."""
        self._thread.join(wait)
        payload = self._payload
        if payload is None:
            return None
        try:
            return pickle.loads(payload)
        except (EOFError, pickle.UnpicklingError):
            return None


class _Relay:
    """Copies a child's output pipe into a Python text stream that has no file descriptor."""

    def __init__(self, pipe, stream):
        self._pipe, self._stream = pipe, stream
        self._thread = threading.Thread(target=self._copy, daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            chunk = os.read(self._pipe.fileno(), 65536)
            text = decoder.decode(chunk, final=not chunk)
            if text:
                self._stream.write(text)
                self._stream.flush()
            if not chunk:
                break
        self._pipe.close()

    def join(self) -> None:
        self._thread.join(1.0)  # a process the script forked may keep the pipe open


def _has_descriptor(stream) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


class _signals_passed_to:
    """While the child runs, SIGTERM and SIGHUP sent to this process are passed on to the
    child, and so is SIGINT unless a terminal sent it: a Ctrl-C reaches every process of the
    terminal's foreground process group, the child with this one, and the child stops on
    its own (passed on as well, it would be interrupted twice). A SIGINT this process gets
    while it is not in a terminal's foreground (`timeout -s INT`, an IDE's stop button,
    `kill -INT` of a background run) reaches only this process: it goes on to the child,
    which stops as `python SCRIPT` stops on it."""

    PASSED = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self, child):
        self.child = child
        self.previous = {}

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers can only be set on the main thread
        self.previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._interrupt)
        for number in self.PASSED:
            self.previous[number] = signal.signal(number, self._pass_on)
        return self

    def _pass_on(self, number, frame) -> None:
        try:
            self.child.send_signal(number)
        except OSError:
            pass

    def _interrupt(self, number, frame) -> None:
        if not _in_a_terminals_foreground():
            self._pass_on(number, frame)

    def __exit__(self, *exc_info) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)


def _in_a_terminals_foreground() -> bool:
    """Whether this process is in the foreground process group of its controlling terminal
    (where a Ctrl-C comes from, whatever its standard streams were redirected to); False
    without one."""
    try:
        terminal = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:  # no controlling terminal
        return False
    try:
        return os.tcgetpgrp(terminal) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(terminal)
