"""The files `genesis trace` writes: trace.json, a picture per distinct graph (graph.svg,
graph-2.svg, ...) and report.html.

Each file is written atomically (a temporary name in the same folder, then a rename),
so an interrupted or failed write leaves the previous file or none, never half of one.
A file that can't be written (read-only folder, full disk) is reported on the error
console with its path, and the others are still attempted. Pictures and reports an
earlier run left in the folder that this run did not write (graph-3.svg from a run
with more graphs) are removed, so the folder holds one run's files.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from genesis.utils.atomic_file import describe_write_error, write_atomic

from ..ui import print_error, print_warning

__all__ = ["write_outputs", "OUTPUT_NAME"]

# Every name this command writes into an output folder.
OUTPUT_NAME = re.compile(r"^(trace\.json|report\.html|graph(-\d+)?\.(svg|png|pdf|dot))$")


def write_outputs(trace, folder: Path, format: str, html: bool, collapse_depth, max_nodes,
                  errors) -> dict:
    """Write the outputs; returns {"json": path, "graphs": [paths], "html": path} for those
    written. A rendering problem is reported and the other files are still written."""
    from viz import RenderError, render, to_html

    files = {"graphs": []}
    path = folder / "trace.json"
    if _written(errors, path, lambda: write_atomic(path, trace.to_json())):
        files["json"] = str(path)
    for index, graph in enumerate(trace.graphs):
        target = folder / f"{'graph' if index == 0 else f'graph-{index + 1}'}.{format}"
        try:
            if _written(errors, target, lambda: _atomically(
                    target, lambda temporary: render(graph, temporary, format=format,
                                                     collapse_depth=collapse_depth,
                                                     max_nodes=max_nodes))):
                files["graphs"].append(str(target))
        except RenderError as error:
            print_warning(errors, f"could not draw {target.name}: {error}")
    if html:
        target = folder / "report.html"
        try:
            if _written(errors, target, lambda: _atomically(
                    target, lambda temporary: to_html(trace, temporary))):
                files["html"] = str(target)
        except RenderError as error:
            print_warning(errors, f"could not write {target.name}: {error}")
    _remove_stale(folder, files)
    return files


def _written(errors, path: Path, write) -> bool:
    try:
        write()
    except OSError as error:
        print_error(errors, describe_write_error(path, error))
        return False
    return True


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
