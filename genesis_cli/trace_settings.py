"""What `genesis trace` settles before the script's process gets its orders: the output
files' names and the picture's node budget, the checks' limit per source line, how the run
is to end (what the report looks like, for which consoles), and whether the TensorBoard
extra is there.

This module (and all a `genesis trace` run imports: the command, the supervisor, the live
line) imports nothing of genesis: the child that runs the script has imported genesis
already (`genesis_cli.warm_child`), and makes the report this process prints. So the script
starts as soon as the command line is parsed, not after a second import of genesis, and
this process never imports it unless the child dies first (tests/cli/test_trace_startup.py).

>>> OutputSettings("out").max_nodes == PICTURE_NODES
True
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

__all__ = ["OutputSettings", "EndingRequest", "console_settings", "PICTURE_NODES", "CHECKS_PER_SITE",
           "PARTIAL_FOLDER", "METRICS_FILE", "MISSING_TENSORBOARD", "tensorboard_installed",
           "EXIT_FINDINGS", "EXIT_USAGE", "EXIT_SCRIPT_RAISED", "EXIT_NOTHING_CHECKED"]

# the exit statuses of genesis trace (besides 0 and the script's own)
EXIT_FINDINGS, EXIT_USAGE, EXIT_SCRIPT_RAISED, EXIT_NOTHING_CHECKED = 1, 2, 3, 4

PICTURE_NODES = 500  # the default node budget of a picture: larger graphs are folded to fit
CHECKS_PER_SITE = 2  # Function calls re-checked per (Function, source line), at most
PARTIAL_FOLDER = "trace.partial"  # the run's journal, inside the output folder, while it runs
METRICS_FILE = "metrics.jsonl"
MISSING_TENSORBOARD = ("--tensorboard writes TensorBoard event files with the tensorboardX "
                       "package, which is not installed: pip install "
                       "'genesis-autograd[tensorboard]' (or pip install tensorboardX)")


@dataclass
class OutputSettings:
    """Where and how `genesis trace` writes its files (plain data: it is handed to the
    process that runs the script, which writes them when the script is done)."""

    folder: str
    format: str = "svg"
    html: bool = True
    collapse_depth: int | None = None
    max_nodes: int | None = PICTURE_NODES


@dataclass
class EndingRequest:
    """How `genesis trace` was asked to end (plain data: it travels to the script's process)."""

    folder: str                      # the output folder, as the one-line summary names it
    shown_script: str
    shown_options: dict
    as_json: bool = False
    quiet: bool = False
    records: str | None = None       # metrics.jsonl, listed when --metrics and written
    tensorboard: str | None = None   # the --tensorboard folder
    cwd: str = ""                    # the folder file names are shown relative to
    out: dict | None = None          # the report console's settings (`console_settings`)
    errors: dict | None = None       # the error console's


def console_settings(console) -> dict:
    """What rendering for a Rich `console` elsewhere needs: its width, colours and whether
    it is a terminal."""
    return {"width": console.width, "color_system": console.color_system,
            "is_terminal": console.is_terminal}


def tensorboard_installed() -> bool:
    """Whether tensorboardX (the `tensorboard` extra) is installed; it is not imported here."""
    return find_spec("tensorboardX") is not None
