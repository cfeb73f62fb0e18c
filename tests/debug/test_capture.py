import numpy as np
import pytest

import genesis
from genesis.debug import Graph, capture_graph

from tests.helpers import Cube

from .modules import MLP


def kinds_and_names(graph):
    return [(node.kind, node.name) for node in graph.nodes]


def test_x_times_two_plus_three():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2 + 3
    graph = capture_graph(y)
    assert kinds_and_names(graph) == [("output", "y"), ("op", "AddBackward"), ("op", "MulBackward"),
                                      ("input", "x")]
    assert [(e.src, e.dst, e.index) for e in graph.edges] == [(1, 0, 0), (2, 1, 0), (3, 2, 0)]
    add, mul = graph.nodes[1], graph.nodes[2]
    assert (add.function, mul.function) == ("Add", "Mul")
    assert add.shape == (2,) and add.dtype == "float32" and add.device == "cpu"
    assert not add.user_defined
    assert graph.edges[0].shape == (2,)


def test_mlp_parameters_are_named_by_module_path():
    model = MLP()
    x = genesis.randn(3, 4)
    loss = model(x).sum()
    graph = capture_graph(loss)
    params = {node.name: node for node in graph.of_kind("param")}
    assert set(params) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    assert params["fc1.weight"].shape == (4, 8) and params["fc1.weight"].module == "fc1"
    assert graph.nodes[0].name == "loss"
    assert [n.name for n in graph.of_kind("op")] == ["SumBackward", "AddBackward", "MatMulBackward",
                                                      "TanhBackward", "AddBackward", "MatMulBackward"]


def test_params_argument_overrides_names():
    w = genesis.randn(3, requires_grad=True)
    graph = capture_graph((w * w).sum(), params={"encoder.scale": w})
    (param,) = graph.of_kind("param")
    assert param.name == "encoder.scale" and param.module == "encoder"


def test_unnamed_tensors_get_positional_names():
    leaves = [genesis.randn(2, requires_grad=True) for _ in range(2)]
    graph = capture_graph(leaves[0] + leaves[1], namespace={})
    assert sorted(n.name for n in graph.of_kind("input")) == ["input0", "input1"]
    assert graph.nodes[0].name == "output0"


def test_distinct_nodes_are_never_merged_even_when_python_reuses_ids():
    total = genesis.tensor(0.0, requires_grad=True)
    for _ in range(200):  # each leaf dies at once (nodes hold it weakly): CPython reuses its id
        total = total + genesis.randn(2, requires_grad=True).sum()
    graph = capture_graph(total, include_saved=False)
    assert len(graph.of_kind("input")) == 201
    assert len(graph.of_kind("op")) == 400
    assert [node.id for node in graph.nodes] == list(range(len(graph.nodes)))


def test_capture_is_deterministic():
    x = genesis.randn(3, requires_grad=True)
    y = (x.tanh() * x).sum()
    assert capture_graph(y).structure_key() == capture_graph(y).structure_key()


def test_structure_hash_and_same_structure_tell_what_structure_key_tells(monkeypatch):
    from genesis.debug import graph as graph_module

    monkeypatch.setattr(graph_module, "STRUCTURE_CHUNK", 3)  # keys in several pieces
    x = genesis.randn(3, requires_grad=True)

    def chain(ops: int, last=lambda y: y.exp()):
        y = x
        for _ in range(ops):
            y = y.tanh() * 1.5
        return capture_graph(last(y).sum())

    one, same, longer, other_op = chain(4), chain(4), chain(5), chain(4, lambda y: y.sin())
    assert one.structure_key() == same.structure_key() and one.same_structure(same)
    assert one.structure_hash() == same.structure_hash()
    for different in (longer, other_op):
        assert one.structure_key() != different.structure_key()
        assert not one.same_structure(different) and not different.same_structure(one)
        assert one.structure_hash() != different.structure_hash()  # (true of these)
    rewired = chain(4)
    rewired.edges[2].index += 1  # an edge alone differs
    assert not one.same_structure(rewired) and one.structure_key() != rewired.structure_key()


def test_saved_tensors_are_nodes_with_shapes():
    x = genesis.randn(2, 3, requires_grad=True)
    w = genesis.randn(3, 4, requires_grad=True)
    graph = capture_graph(x @ w)
    saved = graph.of_kind("saved")
    assert sorted(node.shape for node in saved) == [(2, 3), (3, 4)]
    matmul = graph.find("MatMulBackward")
    assert {e.src for e in graph.edges if e.dst == matmul.id} >= {node.id for node in saved}
    assert not capture_graph(x @ w, include_saved=False).of_kind("saved")


def test_statistics_of_values_and_gradients():
    x = genesis.tensor([1.0, -3.0, 0.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    graph = capture_graph(loss)
    leaf = graph.find("x").outputs[0]
    assert leaf.stats == {"min": -3.0, "max": 1.0, "mean": pytest.approx(-2 / 3), "abs_mean": pytest.approx(4 / 3),
                          "nan": 0, "inf": 0}
    assert leaf.grad["norm"] == pytest.approx(np.sqrt(40.0))
    assert leaf.grad["max_abs"] == 6.0 and leaf.grad["zero_fraction"] == pytest.approx(1 / 3)
    assert graph.nodes[0].outputs[0].stats["mean"] == 10.0


def test_nan_and_inf_are_counted_not_propagated():
    x = genesis.tensor([1.0, float("nan"), float("inf"), -2.0], requires_grad=True)
    graph = capture_graph(x * 1.0)
    stats = graph.find("x").outputs[0].stats
    assert (stats["nan"], stats["inf"], stats["min"], stats["max"]) == (1, 1, -2.0, 1.0)
    Graph.from_json(graph.to_json())  # strict JSON: no NaN literals


def test_user_defined_function_is_flagged():
    x = genesis.randn(2, requires_grad=True)
    graph = capture_graph(Cube.apply(x).sum())
    cube = graph.find("CubeBackward")
    assert cube.user_defined and cube.function == "Cube"
    assert not graph.find("SumBackward").user_defined


def test_leaf_output_and_constant_output():
    x = genesis.randn(2, requires_grad=True)
    graph = capture_graph(x)
    assert kinds_and_names(graph) == [("output", "x"), ("input", "x")]
    constant = genesis.ones(2)
    assert kinds_and_names(capture_graph(constant)) == [("output", "constant")]


def test_several_roots_share_their_common_part():
    x = genesis.randn(2, requires_grad=True)
    hidden = x.tanh()
    first, second = hidden.sum(), (hidden * 2).sum()
    graph = capture_graph(first, second, include_saved=False)
    assert [node.name for node in graph.of_kind("output")] == ["first", "second"]
    assert [node.name for node in graph.nodes].count("TanhBackward") == 1


def test_rejects_non_tensors():
    with pytest.raises(TypeError, match="argument 0 is a list"):
        capture_graph([1, 2])


def test_a_chain_far_deeper_than_any_stack_captures_without_recursion():
    """200,000 ops: a recursive walk would overflow the C stack long before (bench/cost_scaling.py
    runs a million)."""
    x = genesis.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(200_000):
        y = y * 1.0
    graph = capture_graph(y, include_saved=False)
    assert len(graph.nodes) == 200_002
    assert graph.nodes[-1].name == "x" and graph.nodes[1].name == "MulBackward"


# -- module attribution outside record(): written the way PyTorch users write models --------

class _Block(genesis.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.attn = genesis.nn.Linear(width, width)
        self.mlp = genesis.nn.Sequential(genesis.nn.Linear(width, width), genesis.nn.ReLU())

    def forward(self, x):
        return self.mlp(self.attn(x).tanh()) + x


class _Deep(genesis.nn.Module):
    def __init__(self, width=4, depth=3):
        super().__init__()
        self.layers = genesis.nn.ModuleList([_Block(width) for _ in range(depth)])
        self.head = genesis.nn.Linear(width, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x).sum()


class _Cell(genesis.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.inp = genesis.nn.Linear(width, width)
        self.hid = genesis.nn.Linear(width, width)

    def forward(self, x, h):
        return (self.inp(x) + self.hid(h)).tanh()


class _Unrolled(genesis.nn.Module):
    def __init__(self, width=3):
        super().__init__()
        self.cell = _Cell(width)
        self.head = genesis.nn.Linear(width, 1)

    def forward(self, xs):
        h = genesis.zeros(xs.shape[1], xs.shape[2])
        for x in xs:
            h = self.cell(x, h)
        return self.head(h).sum()


def nodes_and_modules(graph):
    return [(node.kind, node.name, node.module) for node in graph.nodes if node.kind != "output"]


def test_ops_outside_record_are_attributed_to_the_module_that_ran_them():
    model = _Deep()
    x = genesis.randn(2, 4)
    loss = model(x)
    graph = capture_graph(loss)
    modules = {node.module for node in graph.of_kind("op")}
    assert {"layers.0.attn", "layers.2.mlp.0", "layers.1.mlp.1", "head", ""} <= modules
    assert graph.modules["layers.1"] == "_Block" and graph.modules["layers.0.mlp.1"] == "ReLU"
    saved = [node for node in graph.of_kind("saved") if node.module == "layers.0.attn"]
    assert saved  # a saved tensor sits in its op's module
    with genesis.debug.record() as recording:
        model(x).backward()
    assert nodes_and_modules(graph) == nodes_and_modules(recording.graphs[0])


def test_repeated_calls_of_a_module_are_numbered_as_record_numbers_them():
    model = _Unrolled()
    xs = genesis.randn(3, 2, 3)
    graph = capture_graph(model(xs))
    assert {node.module for node in graph.of_kind("op")} == {
        "cell", "cell.inp", "cell.hid", "cell#2", "cell#2.inp", "cell#2.hid",
        "cell#3", "cell#3.inp", "cell#3.hid", "head", ""}
    assert graph.modules["cell#3"] == "_Cell" and graph.modules["cell#2.hid"] == "Linear"
    with genesis.debug.record() as recording:
        model(xs).backward()
    assert nodes_and_modules(graph) == nodes_and_modules(recording.graphs[0])


def test_parameters_are_named_through_the_model_that_ran_even_when_it_is_not_in_scope():
    def loss_of(x):  # the model is not among this function's variables
        return _MODEL(x)

    graph = capture_graph(loss_of(genesis.randn(2, 4)), namespace={})
    params = {node.name: node.module for node in graph.of_kind("param")}
    assert params["layers.2.mlp.0.weight"] == "layers.2.mlp.0" and params["head.bias"] == "head"
    assert not graph.of_kind("input")


_MODEL = _Deep()


def test_a_module_made_inside_forward_is_named_by_its_class_under_its_caller():
    class Outer(genesis.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = genesis.nn.Parameter(genesis.ones(2))

        def forward(self, x):
            return genesis.nn.Tanh()(x * self.scale).sum()

    graph = capture_graph(Outer()(genesis.ones(2)))
    assert graph.find("TanhBackward").module == "Tanh" and graph.modules["Tanh"] == "Tanh"
    assert graph.find("MulBackward").module == ""


def test_ops_outside_any_module_have_no_module_and_the_running_call_is_restored():
    layer = genesis.nn.Linear(2, 2)
    x = genesis.randn(1, 2)
    with pytest.raises(RuntimeError):
        layer(genesis.randn(1, 3))  # a shape error inside forward
    assert genesis.autograd.module_scope.running.call is None
    graph = capture_graph((layer(x) * 2).sum())
    assert graph.find("MulBackward").module is None and graph.find("SumBackward").module is None
    assert {node.module for node in graph.of_kind("op")} - {None} == {""}


def test_each_thread_knows_its_own_module_calls():
    import threading

    barrier = threading.Barrier(2, timeout=10)

    class Waits(genesis.nn.Module):  # both threads are inside a module call at the same time
        def forward(self, x):
            barrier.wait()
            return x * 2

    class First(genesis.nn.Module):
        def __init__(self):
            super().__init__()
            self.wait = Waits()
            self.left = genesis.nn.Linear(2, 2)

        def forward(self, x):
            return self.left(self.wait(x)).sum()

    class Second(First):
        def forward(self, x):
            return self.wait(self.left(x)).sum()

    graphs = {}

    def run(model):
        loss = model(genesis.randn(1, 2, requires_grad=True))
        graphs[type(model).__name__] = capture_graph(loss, namespace={})

    threads = [threading.Thread(target=run, args=(model,)) for model in (First(), Second())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, graph in graphs.items():
        assert graph.find("MulBackward").module == "wait", name
        assert graph.modules[""] == name
        assert {node.module for node in graph.of_kind("op") if node.name != "MulBackward"} == {"left", ""}


def test_a_captured_deep_model_folds_by_module_in_its_picture():
    from viz.collapse import build_view

    model = _Deep()
    graph = capture_graph(model(genesis.randn(2, 4)))
    view = build_view(graph, collapse_depth=1, max_nodes=None)
    folded = {item.title: item for item in view.items.values() if item.kind == "module"}
    assert {"layers.0", "layers.1", "layers.2"} <= set(folded)
    for title in ("layers.0", "layers.1", "layers.2"):
        members = [graph.nodes[index] for index in folded[title].members]
        assert sum(node.kind == "op" for node in members) >= 5, title  # not "0 ops, 2 params"
