"""The files `genesis trace` writes: trace.json, a picture per distinct graph (graph.svg,
graph-2.svg, ...) and report.html.

Each file is written atomically (a temporary name in the same folder, then a rename),
so an interrupted or failed write leaves the previous file or none, never half of one.
A file that can't be written (read-only folder, full disk) is reported with its path,
and the others are still attempted. Pictures and reports an
earlier run left in the folder that this run did not write (graph-3.svg from a run
with more graphs) are removed, so the folder holds one run's files.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from genesis.utils.atomic_file import describe_write_error, write_atomic

from ..ui import print_error, print_warning

__all__ = ["write_outputs", "print_problems", "OutputSettings", "OUTPUT_NAME", "PICTURE_NODES"]

# Every name this command writes into an output folder.
OUTPUT_NAME = re.compile(r"^(trace\.json|report\.html|graph(-\d+)?\.(svg|png|pdf|dot))$")


PICTURE_NODES = 500  # the default node budget of a picture: larger graphs are folded to fit


@dataclass
class OutputSettings:
    """Where and how `genesis trace` writes its files (plain data: it is handed to the
    process that runs the script, which writes them when the script is done)."""

    folder: str
    format: str = "svg"
    html: bool = True
    collapse_depth: int | None = None
    max_nodes: int | None = PICTURE_NODES


def write_outputs(trace, settings: OutputSettings) -> tuple:
    """Write the outputs; returns ({"json": path, "graphs": [paths], "html": path} for those
    written, [(severity, message)] for those that could not be: "error" for a file that
    could not be written, "warning" for a picture Graphviz could not draw). One problem
    never stops the other files."""
    from viz import RenderError, render, to_html

    folder = Path(settings.folder)
    files, problems = {"graphs": []}, []

    def written(path: Path, write) -> bool:
        try:
            write()
        except OSError as error:
            problems.append(("error", describe_write_error(path, error)))
            return False
        except RenderError as error:
            problems.append(("warning", f"could not draw {path.name}: {error}"))
            return False
        return True

    path = folder / "trace.json"
    if written(path, lambda: write_atomic(path, trace.to_json())):
        files["json"] = str(path)
    for index, graph in enumerate(trace.graphs):
        target = folder / f"{'graph' if index == 0 else f'graph-{index + 1}'}.{settings.format}"
        if written(target, lambda: _atomically(
                target, lambda temporary: render(graph, temporary, format=settings.format,
                                                 collapse_depth=settings.collapse_depth,
                                                 max_nodes=settings.max_nodes))):
            files["graphs"].append(str(target))
    if settings.html:
        target = folder / "report.html"
        if written(target, lambda: _atomically(target, lambda temporary: to_html(trace, temporary))):
            files["html"] = str(target)
    _remove_stale(folder, files)
    return files, problems


def print_problems(errors, problems: list) -> None:
    """Print what `write_outputs` could not do on the error console."""
    for severity, message in problems:
        (print_error if severity == "error" else print_warning)(errors, message)


def _atomically(target: Path, write_to) -> None:
    """Let `write_to(path)` write a file (it chooses how: Graphviz, the HTML writer) under a
    temporary name with the target's suffix, then move it over `target` in one rename."""
    staged = target.with_name(f".{target.stem}.{os.getpid()}.partial{target.suffix}")
    try:
        write_to(staged)
        os.replace(staged, target)
    finally:
        if staged.exists():
            staged.unlink()


def _remove_stale(folder: Path, files: dict) -> None:
    """Remove this command's outputs of an earlier run that this run did not write again."""
    written = {Path(path).name for path in [files.get("json"), files.get("html"), *files["graphs"]]
               if path}
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if OUTPUT_NAME.match(entry.name) and entry.name not in written and entry.is_file():
            try:
                entry.unlink()
            except OSError:
                pass
