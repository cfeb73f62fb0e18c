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


def test_million_op_chain_captures_without_recursion():
    x = genesis.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    graph = capture_graph(y, include_saved=False)
    assert len(graph.nodes) == 1_000_002
    assert graph.nodes[-1].name == "x" and graph.nodes[1].name == "MulBackward"
