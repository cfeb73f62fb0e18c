"""The Graph's JSON form stays small on long runs (defaults left out, statistics as lists,
one entry per source line, short edges) and reads back exactly; a pickled Graph travels
as that text."""
from __future__ import annotations

import json
import pickle

import genesis
from genesis.debug import Edge, Graph, GraphNode, Source, TensorInfo, record
from genesis.debug.stats import GRAD_KEYS, VALUE_KEYS


def loop_graph(steps: int = 200) -> Graph:
    x = genesis.randn(4, requires_grad=True)
    with record() as recording:
        y = x
        for _ in range(steps):
            y = y * 1.5 + 0.5
        y.sum().backward()
    graph, = recording.graphs
    return graph


def test_a_loop_writes_each_source_line_once_and_leaves_out_defaults():
    graph = loop_graph()
    data = json.loads(graph.to_json())
    assert len(data["sources"]) == 2  # the loop's line and the backward's .sum() line
    file, _, function, code = data["sources"][data["nodes"][5]["source"]]
    assert code == "y = y * 1.5 + 0.5" and file == __file__ and function == "loop_graph"
    op = data["nodes"][5]
    assert set(op) == {"id", "kind", "name", "outputs", "function", "source"}  # cpu, no module
    shape, dtype, values, grads = op["outputs"][0]
    assert (shape, dtype, len(values), len(grads)) == ([4], "float32", len(VALUE_KEYS), len(GRAD_KEYS))
    assert all(len(edge) == 3 for edge in data["edges"])  # output 0, the producer's shape
    assert len(graph.to_json()) / len(graph.nodes) < 300


def test_what_is_left_out_comes_back_and_anything_unusual_is_kept():
    figures = {"mean": 1.5, "nan": 0, "inf": 1}  # not the standard keys: written as they are
    graph = Graph(
        nodes=[GraphNode(0, "input", "x", [TensorInfo((2,), "float32", figures)], device="cuda:1"),
               GraphNode(1, "op", "SplitBackward",
                         [TensorInfo((1,), "float32"), None,
                          TensorInfo((1,), "float32", None, {"norm": 2.0, "nan": 0, "inf": 0})],
                         function="Split", user_defined=True, module="",
                         source=Source("a.py", 3, "f", "y = split(x)"), findings=["nan"]),
               GraphNode(2, "op", "ExpBackward", [], source=Source("a.py", 3, "f", "y = split(x)"))],
        edges=[Edge(0, 1, 0, 0, (2,)), Edge(1, 2, 0, 2, (1,)), Edge(1, 2, 1, 0, (5, 5)),
               Edge(0, 2, 2, 0, None)],
        modules={"": "Net"}, steps=[0, 3], grad_norms={"x": [None, 1.5]}, meta={"k": 1})
    data = json.loads(graph.to_json())
    assert data["edges"] == [[0, 1, 0], [1, 2, 0, 2], [1, 2, 1, 0, [5, 5]], [0, 2, 2, 0, None]]
    assert len(data["sources"]) == 1 and data["nodes"][0]["device"] == "cuda:1"
    again = Graph.from_json(graph.to_json())
    assert again == graph
    assert again.nodes[1].source is again.nodes[2].source


def test_a_pickled_graph_is_its_json_text_and_comes_back_equal():
    graph = loop_graph(50)
    payload = pickle.dumps(graph, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(payload) < len(graph.to_json()) + 200
    again = pickle.loads(payload)
    assert again == graph and again.to_json() == graph.to_json()


def test_text_made_in_chunks_is_the_json_of_to_dict(monkeypatch):
    from genesis.debug import graph as graph_module
    from genesis.debug.json_values import dumps

    monkeypatch.setattr(graph_module, "JSON_CHUNK", 7)
    graph = loop_graph(20)
    graph.grad_norms["x"] = [float("inf"), 2.0]
    assert graph.to_json() == dumps(graph.to_dict(), separators=(",", ":"))
    assert Graph.from_json(graph.to_json()) == graph
    assert Graph().to_json() == dumps(Graph().to_dict(), separators=(",", ":"))


def test_a_trace_holds_its_graphs_texts_whatever_its_strings_say():
    from genesis.debug.trace import Trace

    trace = Trace(script='"graphs":[]', args=['"graphs":[]', "x"], graphs=[loop_graph(5), Graph()])
    text = trace.to_json()
    assert json.loads(text)["script"] == '"graphs":[]'
    again = Trace.from_json(text)
    assert again == trace and again.to_json() == text


def test_a_trace_is_written_in_pieces_that_make_its_json(tmp_path):
    from genesis.debug.trace import Trace
    from genesis.utils.atomic_file import write_atomic
    trace = Trace(script='odd "graphs":[] name.py', graphs=[loop_graph(), loop_graph(3)])
    pieces = list(trace.json_pieces())
    assert not {graph.to_json() for graph in trace.graphs} & set(pieces)  # no graph joined whole
    write_atomic(tmp_path / "trace.json", pieces)
    text = (tmp_path / "trace.json").read_text(encoding="utf-8")
    assert text == trace.to_json()
    assert Trace.from_json(text).script == trace.script
    assert [len(graph.nodes) for graph in Trace.from_json(text).graphs] == \
        [len(graph.nodes) for graph in trace.graphs]
