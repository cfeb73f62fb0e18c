"""The files `genesis trace` writes: trace.json, a picture per distinct graph (graph.svg,
graph-2.svg, ...) and report.html.

Each file is written atomically (a temporary name in the same folder, then a rename),
so an interrupted or failed write leaves the previous file or none, never half of one.
A file that can't be written (read-only folder, read-only file, full disk) is reported
with its path, and the others are still attempted. Files genesis wrote into the folder
earlier that this run did not write again (graph-3.svg from a run with more graphs, a
graph.focus-fc1.weight.svg from `genesis render --focus`) are removed, so the folder
holds one run's files; any other file in it is left alone, and so is a read-only one
(a warning names it).
"""
from __future__ import annotations

import re
from pathlib import Path

from genesis.utils.atomic_file import (describe_write_error, is_read_only, write_atomic,
                                       write_atomic_with)

from ..trace_settings import OutputSettings

__all__ = ["write_outputs", "print_problems", "OUTPUT_NAME"]

# Every name genesis writes into an output folder: this command's trace.json, report.html and
# graph.FORMAT, graph-2.FORMAT, ...; and `genesis render`'s graph.FORMAT (graph-2.FORMAT, ...)
# and, with --focus NODE, graph.focus-NODE.FORMAT (graph-2.focus-NODE.FORMAT, ...), NODE made
# file-safe by render's `_file_safe` (ASCII letters, digits, '_', '.', '#', '-').
OUTPUT_NAME = re.compile(r"^(trace\.json|report\.html|"
                         r"graph(-\d+)?(\.focus-[\w.#-]+)?\.(svg|png|pdf|dot))$", re.ASCII)


def write_outputs(trace, settings: OutputSettings) -> tuple:
    """Write the outputs; returns ({"json": path, "graphs": [paths], "html": path} for those
    written, [(severity, message)] for those that could not be: "error" for a file that
    could not be written, "warning" for a picture Graphviz could not draw). One problem
    never stops the other files."""
    from viz import RenderError, render, write_html  # viz loads graphviz: only when drawing

    folder = Path(settings.folder)
    files, problems, attempted = {"graphs": []}, [], set()

    def written(path: Path, write) -> bool:
        attempted.add(path.name)
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
    if written(path, lambda: write_atomic(path, trace.json_pieces())):
        files["json"] = str(path)
    if settings.html:  # first: its views are laid out together, and a small graph's
        # picture is one of them (viz.backends keeps the last few layouts)
        target = folder / "report.html"
        if written(target, lambda: write_atomic_with(target, lambda temporary: write_html(trace, temporary))):
            files["html"] = str(target)
    for index, graph in enumerate(trace.graphs):
        target = folder / f"{'graph' if index == 0 else f'graph-{index + 1}'}.{settings.format}"
        if written(target, lambda: write_atomic_with(
                target, lambda temporary: render(graph, temporary, format=settings.format,
                                                 collapse_depth=settings.collapse_depth,
                                                 max_nodes=settings.max_nodes))):
            files["graphs"].append(str(target))
    problems.extend(_remove_stale(folder, files, attempted))
    return files, problems


def print_problems(errors, problems: list) -> None:
    """Print what `write_outputs` could not do on the error console."""
    from ..ui import print_error, print_warning  # Rich: not for the script's process, which
    # writes the outputs and hands its problems over to be printed
    for severity, message in problems:
        (print_error if severity == "error" else print_warning)(errors, message)


def _remove_stale(folder: Path, files: dict, attempted: set) -> list:
    """Remove the files genesis wrote into `folder` earlier (`OUTPUT_NAME`) that this run did
    not write again; other files are the user's and stay. A read-only one stays too (genesis
    never removes or replaces a file its owner protected): a warning names it, unless this run
    has already reported that it could not write it. Returns those warnings."""
    written = {Path(path).name for path in [files.get("json"), files.get("html"), *files["graphs"]]
               if path}
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    problems = []
    for entry in entries:
        if not OUTPUT_NAME.match(entry.name) or entry.name in written or not entry.is_file():
            continue
        if is_read_only(entry):
            if entry.name not in attempted:
                problems.append(("warning", f"kept {entry} from an earlier run: it is read-only "
                                            "(chmod u+w it, or remove it)"))
            continue
        try:
            entry.unlink()
        except OSError:
            pass
    return problems
