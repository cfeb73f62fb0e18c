import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

import genesis
import viz
from genesis.debug import Graph, GraphNode, TensorInfo, capture_graph, record
from viz.collapse import build_view

from ..debug.modules import MLP, Linear, Model, Module, Sequential, Unrolled

HOSTILE = '<img src=x onerror=alert(1)> "quoted" {braces}\nnext & \\N back\\slash'


def node_lines(source: str) -> dict:
    """{node id: label} of the DOT source."""
    return dict(re.findall(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"', source, flags=re.M))


def test_x_times_two_plus_three():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2 + 3
    source = viz.to_dot(capture_graph(y)).source
    labels = node_lines(source)
    assert labels["n0"].startswith("y\\n(2,) float32")
    assert labels["n1"].startswith("AddBackward") and labels["n2"].startswith("MulBackward")
    assert labels["n3"].startswith("x\\n(2,) float32")
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)", source, flags=re.M)
    assert edges == [("n1", "n0"), ("n2", "n1"), ("n3", "n2")]
    assert "cluster_legend" in source and 'label="input (other leaf)"' in source


def test_mlp_clusters_and_parameter_labels():
    model = MLP()
    with record() as recording:
        loss = model(genesis.randn(3, 4)).sum()
        loss.backward()
    source = viz.to_dot(recording.graphs[0]).source
    assert re.search(r'subgraph cluster_\d+ \{\s*graph \[[^]]*label="fc1  \(Linear\)"', source)
    labels = node_lines(source).values()
    assert any(label.startswith("fc1.weight\\n(4, 8) float32\\ngrad norm ") for label in labels)
    assert any(label.startswith("loss\\n() float32\\nvalue ") for label in labels)


def hostile_graph():
    w = genesis.randn(2, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    graph = capture_graph(loss, params={HOSTILE: w})
    graph.find("SumBackward").findings.append(HOSTILE)
    graph.modules[HOSTILE] = HOSTILE
    graph.find("MulBackward").module = HOSTILE
    return graph


def test_hostile_names_are_escaped_in_dot():
    source = viz.to_dot(hostile_graph(), show_saved=True).source
    assert "<img" in source  # as text, inside quoted strings
    assert not re.search(r"=<", source), "no value may be an HTML-like label"
    for line in source.splitlines():
        # every quote inside a value is escaped, so each line has balanced unescaped quotes
        assert len(re.findall(r'(?<!\\)(?:\\\\)*"', line)) % 2 == 0, line
    assert "\\\\N back\\\\slash" in source  # a backslash never starts a Graphviz escape


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
def test_hostile_names_are_escaped_in_svg():
    source = viz.to_dot(hostile_graph(), show_saved=True).source
    svg = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=True).stdout
    root = ElementTree.fromstring(svg)
    tags = {element.tag.rpartition("}")[2] for element in root.iter()}
    assert "img" not in tags and "script" not in tags
    texts = [element.text or "" for element in root.iter() if element.tag.endswith("text")]
    assert "<img src=x onerror=alert(1)> \"quoted\" {braces}" in texts
    assert "next & \\N back\\slash" in texts


def test_collapse_depth_folds_deep_modules():
    model = Model(width=4, depth=3)
    with record() as recording:
        model(genesis.randn(2, 4)).backward()
    graph = recording.graphs[0]
    view = build_view(graph, collapse_depth=2, max_nodes=None)
    folded = sorted(item.title for item in view.items.values() if item.kind == "module")
    assert folded == ["encoder.layers.0", "encoder.layers.1", "encoder.layers.2"]
    assert {item.cluster for item in view.items.values() if item.kind == "module"} == {"encoder.layers"}
    everything = build_view(graph, collapse_depth=0, max_nodes=None)
    assert sorted(item.title for item in everything.items.values() if item.kind == "module") == \
        ["encoder", "head"]
    source = viz.to_dot(graph, collapse_depth=2, max_nodes=None).source
    assert 'label="encoder.layers.1  (Block)\\n13 ops, 8 params\\nin (2, 4) → out (2, 4)"' in source
    assert 'label="encoder.layers.0  (Block)\\n13 ops, 8 params\\nout (2, 4)"' in source


def test_repeated_blocks_fold_into_one_badge():
    model = Model(width=4, depth=4)
    with record() as recording:
        model(genesis.randn(2, 4)).backward()
    view = build_view(recording.graphs[0], collapse_depth=2, fold_repeats=True, max_nodes=None)
    (repeat,) = [item for item in view.items.values() if item.kind == "repeat"]
    assert repeat.count == 4 and repeat.title == "encoder.layers.0 … 3"
    source = viz.to_dot(recording.graphs[0], collapse_depth=2, fold_repeats=True).source
    assert "encoder.layers.0 … 3  ×4" in source


def test_blocks_that_differ_are_not_merged():
    layers = Sequential(Linear(4, 4), Linear(4, 4), Linear(4, 3), Linear(3, 3))
    with record() as recording:
        layers(genesis.randn(2, 4)).sum().backward()
    view = build_view(recording.graphs[0], collapse_depth=0, fold_repeats=True, max_nodes=None)
    titles = sorted(item.title for item in view.items.values() if item.kind in ("module", "repeat"))
    assert titles == ["0 … 1", "2", "3"]


def chain_graph(length: int):
    x = genesis.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(length):
        y = y * 1.0001
    return capture_graph(y)


def test_focus_draws_the_neighbourhood():
    graph = chain_graph(20)  # output 0, ops 1..20, x 21
    view = build_view(graph, focus=10, radius=2)
    assert sorted(item.members[0] for item in view.items.values()) == [8, 9, 10, 11, 12]
    assert "radius 2" in view.notes[0]
    by_name = build_view(graph, focus="x", radius=1)
    assert sorted(item.members[0] for item in by_name.items.values()) == [20, 21]
    with pytest.raises(ValueError, match="focus must be a node id"):
        build_view(graph, focus=99)


def test_budget_compresses_long_chains_and_says_so():
    graph = chain_graph(2_000)
    view = build_view(graph, max_nodes=50)
    assert len(view.items) <= 50
    (chain,) = [item for item in view.items.values() if item.kind == "chain"]
    assert len(chain.members) == 1_998
    assert "collapsed to fit 50 nodes" in view.notes[0]
    source = viz.to_dot(graph, max_nodes=50).source
    assert "… 1,998 ops …" in source and "MulBackward ×1,998" in source
    assert "collapsed to fit 50 nodes (2,002 in the graph)" in source


def test_budget_folds_deeper_modules_first():
    model = Model(width=4, depth=6)
    with record() as recording:
        model(genesis.randn(2, 4)).backward()
    graph = recording.graphs[0]
    unfolded = len(build_view(graph, max_nodes=None).items)
    view = build_view(graph, max_nodes=60)
    assert unfolded > 60 >= len(view.items)
    depths = {item.title.count(".") for item in view.items.values() if item.kind == "module"}
    assert depths and max(depths) >= 2  # layers still visible, their insides folded


def test_budget_last_resort_keeps_nodes_nearest_the_outputs():
    leaves = [genesis.randn(2, requires_grad=True) for _ in range(60)]
    total = leaves[0] * leaves[1]
    for first, second in zip(leaves[2::2], leaves[3::2]):
        total = total + first * second  # every Add has two op inputs: nothing is linear
    view = build_view(capture_graph(total), max_nodes=10)
    assert len(view.items) == 10
    assert any("nearest the outputs" in note for note in view.notes)


def test_shared_leaf_is_drawn_at_each_use():
    w = genesis.randn(2, requires_grad=True)
    h = genesis.randn(2)
    for _ in range(4):
        h = (h * w).tanh()
    view = build_view(capture_graph(h.sum(), namespace={"w": w}), max_nodes=None)
    copies = [item for item in view.items.values() if item.kind == "node" and item.title == "w"]
    assert sorted(item.uses for item in copies) == [(1, 4), (2, 4), (3, 4), (4, 4)]


def _unrolled_graph(steps: int):
    with record() as recording:
        Unrolled()(genesis.randn(steps, 2, 3)).backward()
    return recording.graphs[0]


def test_each_call_of_a_cell_is_a_cluster_with_its_own_copies_of_the_weights():
    view = build_view(_unrolled_graph(3), max_nodes=None)
    ops = {item.cluster for item in view.items.values()
           if item.kind == "node" and item.title.endswith("Backward")}
    assert {"cell", "cell#2", "cell#3", "cell.inp", "cell#2.inp", "cell#3.hid"} <= ops
    weights = sorted((item.uses, item.cluster) for item in view.items.values()
                     if item.title == "cell.inp.weight")
    assert weights == [((1, 3), "cell#3.inp"), ((2, 3), "cell#2.inp"), ((3, 3), "cell.inp")]
    source = viz.to_dot(_unrolled_graph(3)).source
    assert 'label="cell#2  (Cell)"' in source and 'label="cell#3.hid  (Linear)"' in source


def test_a_weight_shared_by_two_calls_sits_outside_both():
    view = build_view(_unrolled_graph(2), max_nodes=None)
    (weight,) = [item for item in view.items.values() if item.title == "cell.hid.weight"]
    assert weight.cluster is None and weight.uses is None


def test_calls_of_one_module_fold_like_repeated_blocks():
    view = build_view(_unrolled_graph(4), collapse_depth=0, fold_repeats=True, max_nodes=None)
    (repeat,) = [item for item in view.items.values() if item.kind == "repeat"]
    assert repeat.count == 4 and repeat.title == "cell … cell#4"


def test_findings_and_nan_are_styled_and_in_the_legend():
    x = genesis.tensor([1.0, float("nan")], requires_grad=True)
    graph = capture_graph(x.exp())
    graph.find("ExpBackward").findings.append("grad_mismatch")
    source = viz.to_dot(graph).source
    x_line = next(line for line in source.splitlines() if 'label="x\\n' in line)
    assert 'fillcolor="#FF9E9E"' in x_line and "values: NaN 1 Inf 0" in x_line
    exp_line = next(line for line in source.splitlines() if 'label="ExpBackward' in line)
    assert 'color="#FF6F00"' in exp_line and "⚠ grad_mismatch" in exp_line
    assert "NaN/Inf found" in source and "gradient mismatch" in source


def test_parameter_without_gradient_is_marked():
    used = genesis.randn(2, requires_grad=True)
    unused = genesis.randn(2, requires_grad=True)
    loss = (used * 2).sum() + (unused * 0).sum().detach()
    loss.backward()
    graph = capture_graph(loss, params={"used": used, "unused": unused})
    graph.nodes.append(GraphNode(len(graph.nodes), "param", "unused", [TensorInfo((2,), "float32")]))
    source = viz.to_dot(graph).source
    assert re.search(r'label="unused\\n\(2,\) float32\\nno gradient"', source)
    assert "received no gradient" in source


def test_multi_output_and_none_outputs_are_drawn():
    graph = Graph([GraphNode(0, "op", "SplitBackward", [TensorInfo((1,), "float32"), None,
                                                        TensorInfo((2,), "float32")])], [])
    assert "(1,) float32  (2,) float32" in viz.to_dot(graph).source


def test_rankdir_is_checked():
    with pytest.raises(ValueError, match="rankdir"):
        viz.to_dot(Graph(), rankdir="diagonal")


def test_a_module_outside_the_tree_gets_its_class_name():
    class Wrapper(Module):
        def forward(self, x):
            return Linear(4, 2)(x).sum()  # a module made during forward

    with record() as recording:
        Wrapper()(genesis.randn(1, 4)).backward()
    assert {node.module for node in recording.graphs[0].of_kind("op")} == {"Linear", ""}


def test_saved_tensors_are_drawn_and_in_the_legend():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    graph = capture_graph((x * x).sum())
    source = viz.to_dot(graph, show_saved=True).source
    assert sum('label="saved ' in line for line in source.splitlines()) == 2
    assert "tensor saved for backward" in source


def test_inf_in_values_alone_is_not_drawn_as_a_problem():
    """A -inf attention mask is deliberate: no red unless a checker tagged the node."""
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    masked = x + genesis.tensor([0.0, float("-inf")])
    graph = capture_graph(masked.softmax(dim=0))
    add_line = next(line for line in viz.to_dot(graph).source.splitlines() if 'label="AddBackward' in line)
    assert 'fillcolor="#FF9E9E"' not in add_line


def test_a_graph_drawn_again_is_folded_once_and_drawn_the_same(monkeypatch):
    from viz import collapse

    graph = chain_graph(2_000)
    fresh = [build_view(chain_graph(2_000), max_nodes=budget) for budget in (50, 500)]
    made = []
    real = collapse._Layout._made_view
    monkeypatch.setattr(collapse._Layout, "_made_view",
                        lambda layout, policy: made.append(policy) or real(layout, policy))
    first, second = (build_view(graph, max_nodes=budget) for budget in (50, 500))
    again = build_view(graph, max_nodes=50)
    assert made.count(collapse._Policy(None, False, True)) == 1  # the long chain, folded once
    for view, expected in ((first, fresh[0]), (second, fresh[1]), (again, fresh[0])):
        assert view.items == expected.items and view.edges == expected.edges
        assert view.notes == expected.notes  # each drawing's own notes, not piled up
    graph.edges = list(graph.edges)  # other lists: made again
    build_view(graph, max_nodes=50)
    assert made.count(collapse._Policy(None, False, True)) == 2


def test_a_folded_graph_is_freed_as_soon_as_it_is_dropped():
    import gc
    import weakref

    graph = chain_graph(300)
    build_view(graph, max_nodes=50)  # its layout is kept in the graph: no cycle through it
    dropped = weakref.ref(graph)
    gc.disable()
    try:
        del graph
        assert dropped() is None
    finally:
        gc.enable()
