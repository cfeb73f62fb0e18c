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


def test_find_names_the_missing_node():
    with pytest.raises(KeyError, match="no node named 'nope'"):
        Graph().find("nope")
