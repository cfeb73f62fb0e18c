"""The `genesis` command's entry point.

For `genesis trace`, the process the script will run in is started first thing
(`warm_child.prestart`), so that it imports genesis while this process parses the
command line, which imports nothing of genesis (`genesis_cli.root.trace_app`): the script
starts as soon as both are done. That process makes the report too, so this one imports
genesis only when that process dies first.

When the run is over (its files written and closed, the report printed), this process
ends at once (`leave`) instead of tearing down what it imported, genesis and Rich among
it: nothing of the script runs here, and the teardown took a tenth of a second on every
run.

Every command writes through streams that take a reader leaving early (`| head`) quietly
(`closed_readers`): the exit status is the command's, not a broken pipe's.
"""
from __future__ import annotations

import os
import signal
import sys

from . import warm_child
from .closed_readers import readers_may_leave


def main() -> None:
    try:
        with readers_may_leave():  # `genesis ... | head`: the exit status still tells the truth
            if sys.argv[1:2] == ["trace"]:
                warm_child.prestart()
                from .root import trace_app  # imported only now: the child is on its way

                try:
                    trace_app()()
                except SystemExit as done:
                    leave(done.code)
                return
            from .app import main as run_app

            run_app()
    except KeyboardInterrupt:  # Ctrl-C before a command took over (while this one imports)
        leave(128 + signal.SIGINT)


def leave(code) -> None:
    """End this process as `sys.exit(code)` would (None is 0; a message is printed to
    stderr and gives 1), after flushing its standard streams, without the interpreter's
    teardown. Status 130 (the script was stopped by Ctrl-C) ends it by SIGINT instead, as
    python ends on Ctrl-C: a shell loop running `genesis trace` then stops as well."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader gone (`| head`), or a stream closed
            pass
    if status == 128 + signal.SIGINT:  # Ctrl-C: end by SIGINT, as python does, so that a
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # shell loop running this stops too
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status & 0xFF)
