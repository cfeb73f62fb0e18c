"""The import graph of genesis, viz and genesis_cli points one way: down the layers of
docs/architecture.md, with no cycle anywhere.

Every import counts, at module level or inside a function (grimp reads them all). A
package's `__init__` belongs to the highest layer it re-exports, so a module imports the
module that holds a name (`genesis.autograd.function`), not the package (`genesis.autograd`).
"""
from __future__ import annotations

from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS = (
    ("base", ("genesis.dtypes", "genesis.device", "genesis.cuda", "genesis.random",
              "genesis.sizes", "genesis.utils.atomic_file", "genesis.listeners", "genesis.threads", "genesis.cpu_workers",
              "genesis.layouts", "genesis.inference_tensors", "genesis.grad_state",
              "genesis.determinism", "genesis.sparse_gradients", "genesis.autocast_rules")),
    ("core", ("genesis.tensor", "genesis._tensor_str", "genesis.autograd.function",
              "genesis.autograd.engine", "genesis.autograd.graph_task", "genesis.autograd.grad_mode",
              "genesis.autograd.hooks",
              "genesis.autograd.hook_results", "genesis.autograd.anomaly",
              "genesis.autograd.module_scope", "genesis.autograd.source",
              "genesis.autograd.tensor_map", "genesis.autograd.nonfinite",
              "genesis.autograd.nonfinite_counts", "genesis.autograd.nonfinite_report",
              "genesis.autograd.unbroadcast", "genesis.autograd.tensor_methods",
              "genesis.autograd.saved_hooks", "genesis.autograd.bfloat16_results",
              "genesis.autograd.autocast_casts")),
    ("ops", ("genesis.ops", "genesis.creation", "genesis.linalg")),
    ("library", ("genesis.nn", "genesis.optim", "genesis.amp", "genesis.utils",
                 "genesis.serialization", "genesis.saved_storages", "genesis.rng", "genesis.autograd",
                 "genesis.library", "genesis.profiler", "genesis.distributed",
                 "genesis.multiprocessing")),
    ("debug", ("genesis.debug",)),
    ("genesis", ("genesis",)),
    ("compat", ("genesis.compat",)),
    ("viz", ("viz",)),
    ("cli", ("genesis_cli",)),
)
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    best, best_length = None, -1
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = name, len(prefix)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best


@pytest.fixture(scope="module")
def graph():
    import sys

    sys.path.insert(0, str(ROOT))
    try:
        return grimp.build_graph("genesis", "viz", "genesis_cli", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))


def _where(graph, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    return "; ".join(f"line {d['line_number']}: {d['line_contents']}" for d in details)


def test_imports_only_point_down(graph):
    upward = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if RANK[layer_of(imported)] > RANK[layer_of(importer)]:
                upward.append(f"{importer} ({layer_of(importer)}) imports {imported} "
                              f"({layer_of(imported)}): {_where(graph, importer, imported)}")
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def _cycles(graph) -> list:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles(graph):
    described = []
    for component in _cycles(graph):
        members = set(component)
        lines = [f"  {importer} -> {imported}: {_where(graph, importer, imported)}"
                 for importer in component
                 for imported in sorted(graph.find_modules_directly_imported_by(importer))
                 if imported in members]
        described.append(f"cycle among {len(component)} modules:\n" + "\n".join(lines))
    assert not described, "\n".join(described)


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for importer, imported in (("a.x", "a.y"), ("a.y", "a.z"), ("a.z", "a.x"), ("a.z", "a.w")):
        graph.add_import(importer=importer, imported=imported)
    assert _cycles(graph) == [["a.x", "a.y", "a.z"]]


def test_every_module_has_a_layer(graph):
    for module in graph.modules:
        layer_of(module)
