"""What `genesis trace` settles before the script's process gets its orders: the output
files' names and the picture's node budget, the checks' limit per source line, and
whether the TensorBoard extra is there.

This module (and all a `genesis trace` run imports before the orders are sent: the
command, the supervisor, the live line) imports nothing of genesis: the child that runs
the script has imported genesis already (`genesis_cli.warm_child`), and this process
imports it while the script runs. So the script starts as soon as the command line is
parsed, not after a second import of genesis (tests/cli/test_trace_startup.py).

>>> OutputSettings("out").max_nodes == PICTURE_NODES
True
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

__all__ = ["OutputSettings", "PICTURE_NODES", "CHECKS_PER_SITE", "PARTIAL_FOLDER", "METRICS_FILE",
           "MISSING_TENSORBOARD", "tensorboard_installed"]

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


def tensorboard_installed() -> bool:
    """Whether tensorboardX (the `tensorboard` extra) is installed; it is not imported here."""
    return find_spec("tensorboardX") is not None
