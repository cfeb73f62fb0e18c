"""`genesis render`: redraw the graphs of a saved trace without re-running the script.

    genesis render runs/trace.json                       graph.svg (graph-2.svg, ...) beside it
    genesis render trace.json --graph 2 --out step.png   one graph, as PNG
    genesis render trace.json --focus fc1.weight --radius 2   graph.focus-fc1.weight.svg beside it
    genesis render trace.json --collapse-depth 1 --format dot

The input is a `trace.json` (`genesis.debug.trace.Trace`), the folder holding
one, or a bare Graph JSON; or the journal of a run that never finished (an output
folder whose `trace.partial/` is left because genesis itself was killed): what it
captured is drawn.
Nodes that findings point at are coloured by the findings' tags. Graphs are
numbered from 1, as in the file names. A drawing around `--focus` goes to a file
of its own, never over the full graph's, and the command says how much of the
graph it drew. Exit status 0 on success, 1 when Graphviz fails or a file can't be
written, 2 for a usage error (missing, unreadable or malformed file, bad option
or node: one line naming the file and what is wrong in it).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import typer

from genesis.debug.graph import Graph
from genesis.debug.journal import JOURNAL_FILE, read_journal
from genesis.debug.json_values import loads
from genesis.debug.printable import printable
from genesis.debug.trace import Trace
from viz import RenderError
from viz.collapse import neighbourhood
from viz.render import FORMATS, render

from ..trace_settings import PARTIAL_FOLDER
from ..ui import make_console, print_error, print_warning

__all__ = ["render_command", "load_graphs", "load_trace", "mark_findings", "find_node",
           "UsageError"]


class UsageError(ValueError):
    """A bad file or option; the message says which and what to do."""


def render_command(
    trace_file: Path = typer.Argument(..., show_default=False, metavar="TRACE", help=(
        "A trace.json written by `genesis trace` (or its folder, or a Graph JSON).")),
    out: str | None = typer.Option(None, "--out", "-o", show_default=False, help=(
        "File to write (several graphs: FILE, FILE-2, ...; a folder, or a name ending in /: "
        "graph.FORMAT inside it). Default: graph.FORMAT next to the trace (with --focus: "
        "graph.focus-NODE.FORMAT).")),
    format: str | None = typer.Option(None, "--format", "-f", help=(
        "svg, png, pdf or dot (png and pdf need Graphviz's dot). Default: --out's suffix, else svg.")),
    collapse_depth: int | None = typer.Option(None, "--collapse-depth", min=0, help=(
        "Fold every module deeper than this many levels into one node.")),
    focus: str | None = typer.Option(None, "--focus", help=(
        "Draw only around this node: an id, or a name like fc1.weight or LogBackward (first match); "
        "written to a file of its own.")),
    radius: int = typer.Option(3, "--radius", min=0, help="With --focus: how many edges around the node."),
    graph_number: int | None = typer.Option(None, "--graph", min=1, help=(
        "Which graph to draw, from 1 (default: all).")),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (also: NO_COLOR=1)."),
) -> None:
    """Redraw a saved trace's graphs (SVG, PNG, PDF or DOT), findings coloured.

    Examples: genesis render runs/trace.json; genesis render trace.json --graph 2 --out step.png;
    genesis render trace.json --focus fc1.weight --radius 2
    """
    console = make_console(no_color=no_color)
    err = make_console(no_color=no_color, stderr=True)
    try:
        graphs, findings = load_graphs(trace_file)
        for problem in mark_findings(graphs, findings):
            print_warning(err, printable(problem))
        out, folder_named = _output(out)
        chosen_format = _format(format, None if folder_named else out)
        chosen = _choose(graphs, graph_number)
        if focus is not None:
            chosen = _focused(chosen, focus, err)
        paths = _paths(trace_file, out, chosen_format, [number for number, _, _ in chosen],
                       exact=out is not None and len(chosen) == 1 and not out.is_dir(), focus=focus)
    except UsageError as error:
        print_error(err, printable(str(error)))
        raise typer.Exit(2) from None
    for (number, graph, centre), path in zip(chosen, paths):
        try:
            render(graph, path, format=chosen_format, collapse_depth=collapse_depth, focus=centre,
                   radius=radius)
        except RenderError as error:
            print_error(err, printable(str(error)))
            raise typer.Exit(1) from None
        except OSError as error:
            print_error(err, printable(f"could not write {path}: {error.strerror or error}"))
            raise typer.Exit(1) from None
        if centre is None:
            said = f"wrote {path}: {_describe(graph, number, len(graphs))}"
        else:
            said = f"{_describe_focus(graph, centre, radius, focus)} (graph {number} of {len(graphs)}) → {path}"
        console.print(printable(said), markup=False, soft_wrap=True)


def load_graphs(path: Path) -> tuple:
    """(graphs, findings) of a trace.json (or of the trace.json in folder `path`), or
    ([graph], []) of a Graph JSON."""
    loaded = _load(Path(path))
    if isinstance(loaded, Graph):
        return [loaded], []
    return loaded.graphs, loaded.findings


def load_trace(path: Path) -> Trace:
    """The Trace of a trace.json, of the folder holding one, or of an unfinished run's
    journal; a UsageError saying why not otherwise (a Graph JSON is a graph, not a run)."""
    loaded = _load(Path(path))
    if isinstance(loaded, Graph):
        raise UsageError(f"{path} is a Graph JSON, not a run; give the trace.json (or the folder) "
                         "that `genesis trace` wrote")
    return loaded


def _load(path: Path):
    """A Trace, or a Graph for a bare Graph JSON."""
    journal = unfinished_run(path)
    if journal is not None:
        try:
            return read_journal(journal)
        except (OSError, ValueError) as error:
            raise UsageError(f"{journal} holds an unfinished run that can't be read: {error}") from None
    if path.is_dir():
        if not (path / "trace.json").is_file():
            raise UsageError(f"{path} is a folder without a trace.json; give the trace file")
        path = path / "trace.json"
    data = _read_json(path)
    schema = data.get("schema") if isinstance(data, dict) else None
    try:
        if schema == "genesis.debug.Trace":
            return Trace.from_dict(data)
        if schema == "genesis.debug.Graph":
            return Graph.from_dict(data)
    except ValueError as error:  # says where in the file and what is wrong there
        raise UsageError(f"{path}: {error}") from None
    raise UsageError(f"{path} is not a genesis trace.json or Graph JSON (its schema is {schema!r})")


def _read_json(path: Path):
    """The JSON value in the file at `path`, or a UsageError saying why there is none."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"no such file: {path} (run `genesis trace SCRIPT` to write a trace.json)") from None
    except OSError as error:
        raise UsageError(f"can't read {path}: {error.strerror or error}") from None
    try:
        text = text.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path} is not JSON: byte {error.start} (0x{text[error.start]:02x}) is not "
                         "UTF-8 text; give a trace.json written by `genesis trace`") from None
    try:
        return loads(text)
    except json.JSONDecodeError as error:
        if error.pos >= len(text.rstrip()) or error.msg == "Unterminated string starting at":
            raise UsageError(f"{path} is not JSON: it ends before its JSON does (a file cut "
                             "short?); write it again with `genesis trace`") from None
        raise UsageError(f"{path} is not JSON ({error}); give a trace.json written by "
                         "`genesis trace`") from None
    except RecursionError:
        raise UsageError(f"{path} is not a genesis trace: its JSON is nested too deeply to read") from None


def unfinished_run(path: Path) -> Path | None:
    """The journal folder of a run that never wrote its trace.json (genesis itself was killed
    while the script ran), when `path` is that folder, its journal file, or an output folder
    holding one and no trace.json."""
    if path.name == JOURNAL_FILE and path.is_file():
        return path.parent
    if path.is_dir() and (path / JOURNAL_FILE).is_file():
        return path
    if path.is_dir() and not (path / "trace.json").is_file() and \
            (path / PARTIAL_FOLDER / JOURNAL_FILE).is_file():
        return path / PARTIAL_FOLDER
    return None


def mark_findings(graphs: list, findings: list) -> list:
    """Put each finding's tag on the node it points at (once); returns a line for each
    finding that points outside the graphs."""
    problems = []
    for finding in findings:
        if finding.graph is None or finding.node is None:
            continue
        if not (0 <= finding.graph < len(graphs) and 0 <= finding.node < len(graphs[finding.graph].nodes)):
            problems.append(f"finding {finding.title!r} points at node {finding.node} of graph "
                            f"{finding.graph + 1}, which the trace does not have; it is not drawn")
            continue
        tags = graphs[finding.graph].nodes[finding.node].findings
        if finding.tag not in tags:
            tags.append(finding.tag)
    return problems


def find_node(graph: Graph, focus: str) -> int | None:
    """The id of the node `focus` names: an id, else the first node of that name, else the
    first op of that Function class (e.g. Log for LogBackward); None when there is none.

    >>> from genesis.debug import GraphNode
    >>> graph = Graph([GraphNode(0, "param", "fc1.weight", []), GraphNode(1, "op", "LogBackward", [], function="Log")])
    >>> find_node(graph, "LogBackward"), find_node(graph, "Log"), find_node(graph, "0"), find_node(graph, "x")
    (1, 1, 0, None)
    """
    if focus.isdigit():
        return int(focus) if int(focus) < len(graph.nodes) else None
    for node in graph.nodes:
        if node.name == focus:
            return node.id
    for node in graph.nodes:
        if node.function == focus:
            return node.id
    return None


def _output(out: str | None) -> tuple:
    """(--out as a Path, whether it names a folder): an existing folder, or a name ending in
    a slash, which is made (with the folders above it) when missing."""
    if out is None:
        return None, False
    path = Path(out)
    if out.endswith(("/", os.sep)) and not path.is_dir():
        try:
            path.mkdir(parents=True)
        except OSError as error:
            raise UsageError(f"--out {out}: could not make the folder: "
                             f"{error.strerror or error}") from None
    return path, path.is_dir()


def _format(format: str | None, out: Path | None) -> str:
    """The picture format: --format, else --out's suffix, else svg; a suffix that is no
    format genesis draws (pic.jpg) is a usage error rather than an SVG under that name."""
    if format is None:
        suffix = out.suffix.lstrip(".").lower() if out is not None else ""
        if suffix and not suffix.isdigit() and suffix not in FORMATS:  # (run.3: no suffix)
            raise UsageError(f"--out {out}: genesis render draws {', '.join(FORMATS)}, not "
                             f".{suffix}; name the file .svg (or .png, .pdf, .dot), or pass "
                             "--format to write that format under this name")
        return suffix if suffix in FORMATS else "svg"
    if format.lower() not in FORMATS:
        raise UsageError(f"bad --format {format!r}: choose one of {', '.join(FORMATS)}")
    return format.lower()


def _choose(graphs: list, number: int | None) -> list:
    """[(number from 1, graph, focus id)] of the graphs to draw."""
    if not graphs:
        raise UsageError("the trace holds no graphs (did the script call backward while traced?)")
    if number is None:
        return [(index, graph, None) for index, graph in enumerate(graphs, 1)]
    if number > len(graphs):
        raise UsageError(f"--graph {number}: the trace has {len(graphs)} graph"
                         f"{'' if len(graphs) == 1 else 's'}; pick 1 to {len(graphs)}")
    return [(number, graphs[number - 1], None)]


def _focused(chosen: list, focus: str, err) -> list:
    """The chosen graphs that have the focus node, with its id; the others are noted."""
    found = [(number, graph, find_node(graph, focus)) for number, graph, _ in chosen]
    kept = [item for item in found if item[2] is not None]
    if not kept:
        names = sorted({node.name for _, graph, _ in chosen for node in graph.nodes})
        where = f"graph {chosen[0][0]}" if len(chosen) == 1 else "any graph"
        raise UsageError(f"--focus {focus!r}: no such node in {where}; give a node id or a name such "
                         f"as {', '.join(names[:8])}" + (", ..." if len(names) > 8 else ""))
    skipped = [str(number) for number, _, centre in found if centre is None]
    if skipped:
        print_warning(err, printable(f"--focus {focus!r} is not in graph {', '.join(skipped)}; not drawn"))
    return kept


def _paths(trace_file: Path, out: Path | None, format: str, numbers: list, exact: bool,
           focus: str | None = None) -> list:
    """Where each graph goes: `out` itself for one graph; else graph.FORMAT, graph-2.FORMAT, ...
    in `out`'s folder (or in `out` when it is a folder, or beside the trace). A drawing around
    `focus` is graph.focus-NAME.FORMAT (graph-2.focus-NAME.FORMAT, ...) unless `out` names it."""
    stem = "graph" if focus is None else f"graph.focus-{_file_safe(focus)}"
    if exact:
        base = out
    elif out is None:
        folder = trace_file if trace_file.is_dir() else trace_file.parent
        base = folder / f"{stem}.{format}"
    elif out.is_dir():
        base = out / f"{stem}.{format}"
    else:
        base = out
    if not base.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {base.parent} does not exist")
    if exact:
        return [base]
    if focus is not None and base.name == f"{stem}.{format}":
        return [base if number == 1 else base.with_name(f"graph-{number}{base.name[len('graph'):]}")
                for number in numbers]
    return [base if number == 1 else base.with_name(f"{base.stem}-{number}{base.suffix}")
            for number in numbers]


def _file_safe(name: str) -> str:
    """`name` as part of a file name: letters, digits, '.', '_', '-' and '#' kept, runs of
    anything else one '_'.

    >>> _file_safe("fc1.weight"), _file_safe("cell#2/inp weight")
    ('fc1.weight', 'cell#2_inp_weight')
    """
    return re.sub(r"[^\w.#-]+", "_", name, flags=re.ASCII).strip(".") or "node"


def _describe_focus(graph: Graph, centre: int, radius: int, focus: str) -> str:
    """What a drawing around node `centre` holds: the nodes within `radius` edges (tensors
    saved for backward are not drawn), as the picture's own note counts them."""
    drawn = len(neighbourhood(graph, centre, radius))
    named = focus if not focus.isdigit() else f"node {centre} ({graph.nodes[centre].name})"
    return (f"drew {drawn:,} of {len(graph.nodes):,} nodes within {radius} edge"
            f"{'' if radius == 1 else 's'} of {named}")


def _describe(graph: Graph, number: int, total: int) -> str:
    ops = sum(1 for node in graph.nodes if node.kind == "op")
    marked = sorted({tag for node in graph.nodes for tag in node.findings})
    # (the graph's nodes: the drawing may fold them)
    nodes = len(graph.nodes)
    text = (f"graph {number} of {total}, {ops} op{'s' if ops != 1 else ''} and "
            f"{nodes} node{'s' if nodes != 1 else ''} in all")
    return text + (f", findings marked: {', '.join(marked)}" if marked else "")
