"""The `genesis` command's entry point.

For `genesis trace`, the process the script will run in is started first thing
(`warm_child.prestart`), so that it imports genesis while this process parses the
command line, which imports nothing of genesis (`genesis_cli.root.trace_app`): the script
starts as soon as both are done, and this process imports genesis while it runs.
"""
from __future__ import annotations

import sys

from . import warm_child


def main() -> None:
    if sys.argv[1:2] == ["trace"]:
        warm_child.prestart()
        from .root import trace_app  # imported only now: the child is already on its way

        trace_app()()
        return
    from .app import main as run_app

    run_app()
