import json

import pytest

import genesis
from genesis.debug import SCHEMA_VERSION, Graph, capture_graph, record

from .modules import MLP


def recorded_graph():
    model = MLP()
    with record() as recording:
        loss = model(genesis.randn(3, 4)).sum()
        loss.backward()
    (graph,) = recording.graphs
    return graph


def test_round_trip_is_exact():
    graph = recorded_graph()
    graph.nodes[2].findings.append("grad_mismatch")
    text = graph.to_json()
    again = Graph.from_json(text)
    assert again == graph
    assert again.to_json() == text
    assert again.nodes[2].source == graph.nodes[2].source and again.nodes[2].source is not None
    assert again.modules == {"": "MLP", "fc1": "Linear", "fc2": "Linear"}


def test_json_has_schema_and_version():
    x = genesis.randn(2, requires_grad=True)
    data = json.loads(capture_graph(x.exp()).to_json())
    assert data["schema"] == "genesis.debug.Graph" and data["version"] == SCHEMA_VERSION


def test_unknown_version_is_rejected_clearly():
    x = genesis.randn(2, requires_grad=True)
    data = json.loads(capture_graph(x.exp()).to_json())
    data["version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match="schema version"):
        Graph.from_json(json.dumps(data))


def test_a_malformed_entry_is_counted_in_words_that_agree():
    x = genesis.randn(2, requires_grad=True)
    data = json.loads(capture_graph(x.exp()).to_json())
    data["edges"][0] = data["edges"][0][:1]
    with pytest.raises(ValueError, match=r"has 1 entry, expected 3 to 5"):
        Graph.from_json(json.dumps(data))


def test_find_names_the_missing_node():
    with pytest.raises(KeyError, match="no node named 'nope'"):
        Graph().find("nope")


def strict_loads(text: str):
    """json.loads that refuses the NaN/Infinity literals strict JSON does not have."""
    def refuse(literal):
        raise ValueError(f"non-strict JSON literal {literal}")
    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_strict_json_and_read_back():
    from genesis.debug.findings import Finding
    from genesis.debug.trace import Trace
    from genesis.debug.graph import GraphNode, TensorInfo
    from genesis.debug.trace import ParameterRow

    stats = {"min": float("-inf"), "max": float("inf"), "mean": float("nan"), "nan": 1, "inf": 2}
    graph = Graph([GraphNode(0, "op", "MaskedFillBackward", [TensorInfo((2,), "float32", stats)])],
                  grad_norms={"w": [float("nan"), 1.0]})
    finding = Finding("gradient_mismatch", "error", "wrong", graph=0, node=0,
                      details={"worst": [[0, [1], float("inf"), float("-inf")]],
                               "parameters": ["NaN"]})
    trace = Trace(script="s.py", graphs=[graph], findings=[finding],
                  parameters=[ParameterRow("w", (2,), "float32", float("inf"), "nan",
                                           [float("nan"), float("inf")])],
                  meta={"checks": [{"function": "F", "max_abs_error": float("nan")}]})
    text = trace.to_json()
    data = strict_loads(text)
    assert data["graphs"][0]["nodes"][0]["outputs"][0][2]["min"] == "-Infinity"
    again = Trace.from_json(text)
    figures = again.graphs[0].nodes[0].outputs[0].stats
    assert figures["min"] == float("-inf") and figures["max"] == float("inf")
    assert figures["mean"] != figures["mean"]  # NaN
    assert again.findings[0].details["worst"][0][2:] == [float("inf"), float("-inf")]
    assert again.findings[0].details["parameters"] == ["NaN"]  # a name stays a name
    assert again.parameters[0].grad_norm == float("inf")
    assert again.graphs[0].grad_norms["w"][1] == 1.0
    assert again.to_json() == text


@pytest.mark.parametrize("name", ["fc\x00\x1b[31m\n", "caf\udcc3\udca9", "\ud800lone", '"};</script>',
                                  "a\u2028b", "-->"])
def test_any_name_gives_strict_ascii_json(name):
    from genesis.debug.graph import GraphNode, TensorInfo

    graph = Graph([GraphNode(0, "param", name, [TensorInfo((1,), "float32")], module=name)],
                  modules={name: name})
    text = graph.to_json()
    text.encode("ascii")
    again = Graph.from_dict(strict_loads(text))
    expected = name.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert again.nodes[0].name in (name, expected)
    assert "\ud800" not in again.nodes[0].name and "\udcc3" not in again.nodes[0].name


def test_a_graph_tagged_after_its_json_was_made_writes_the_tag():
    from genesis.debug.graph import Graph, GraphNode
    graph = Graph([GraphNode(0, "op", "MulBackward", []), GraphNode(1, "input", "x", [])])
    first = graph.to_json()
    assert graph.to_json() == first            # made once, kept
    graph.add_finding(1, "nan")
    graph.add_finding(1, "nan")                # once only
    again = Graph.from_json(graph.to_json())
    assert again.nodes[1].findings == ["nan"] and again.nodes[0].findings == []
    graph.nodes = [GraphNode(0, "op", "AddBackward", [])]   # a later step's nodes
    assert Graph.from_json(graph.to_json()).nodes[0].name == "AddBackward"
