"""`genesis render`: redraw a saved trace (SVG and DOT; findings coloured; --graph, --out,
--focus, --collapse-depth), bare Graph JSON, and the usage errors (exit 2)."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import genesis
from genesis import nn
from genesis.debug import record
from genesis.debug.findings import Finding
from genesis.debug.trace import Trace
from genesis_cli.app import app
from genesis_cli.commands.render import UsageError, load_graphs, mark_findings
from tests.helpers import usage_error
from viz.dot import to_dot
from viz.style import FINDING_STYLES

SVG = "{http://www.w3.org/2000/svg}"
NAN_FILL = FINDING_STYLES["nan_inf"]["fillcolor"].lower()


def run(*args):
    return CliRunner().invoke(app, ["render", *map(str, args)])


@pytest.fixture
def traced():
    """A Trace of two backward calls with different graphs (a small MLP whose output goes
    through exp and log, then a plain product) and a NaN finding on the LogBackward node."""
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = genesis.tensor([[1.0, 2.0, 3.0]])
    y = genesis.tensor([1.0, 2.0], requires_grad=True)
    with record() as recording:
        net(x).exp().log().sum().backward()
        (y * y).sum().backward()
    graphs = recording.graphs
    log = graphs[0].find("LogBackward")
    finding = Finding("nan_forward", "error", "Log produced NaN", op="LogBackward", graph=0, node=log.id)
    return Trace(script="model.py", graphs=graphs, findings=[finding])


@pytest.fixture
def trace_file(tmp_path, traced):
    path = tmp_path / "trace.json"
    path.write_text(traced.to_json())
    return path


def svg_nodes(path) -> dict:
    """First label line -> (texts, fills) of each drawn node (legend entries left out)."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg"
    nodes = {}
    for group in root.iter(SVG + "g"):
        title = group.find(SVG + "title")
        if group.get("class") != "node" or title.text.startswith("legend"):
            continue
        texts = [text.text.replace("\xa0", " ") for text in group.iter(SVG + "text")]
        fills = {shape.get("fill", "").lower() for shape in group.iter()
                 if shape.tag in (SVG + "path", SVG + "polygon", SVG + "ellipse")}
        nodes[texts[0]] = (texts, fills)
    return nodes


def test_renders_every_graph_next_to_the_trace_with_findings_coloured(trace_file):
    before = trace_file.read_text()
    result = run(trace_file)
    assert result.exit_code == 0, result.output
    first, second = trace_file.parent / "graph.svg", trace_file.parent / "graph-2.svg"
    assert f"wrote {first}: graph 1 of 2" in result.output and "findings marked: nan" in result.output
    assert f"wrote {second}: graph 2 of 2" in result.output
    nodes = svg_nodes(first)
    assert {"LogBackward", "ExpBackward", "TanhBackward", "0.weight", "2.bias"} <= set(nodes)
    assert NAN_FILL in nodes["LogBackward"][1]
    assert NAN_FILL not in nodes["ExpBackward"][1]
    assert "MulBackward" in svg_nodes(second)
    assert trace_file.read_text() == before   # the trace is read, never rewritten


def test_one_graph_as_dot_to_a_chosen_file(trace_file, tmp_path):
    out = tmp_path / "picture.dot"
    result = run(trace_file, "--graph", "1", "--format", "dot", "--out", out)
    assert result.exit_code == 0, result.output
    source = out.read_text()
    assert source.startswith("digraph genesis") and "LogBackward" in source
    assert FINDING_STYLES["nan_inf"]["fillcolor"] in source
    assert not (tmp_path / "graph.svg").exists()


def test_out_names_several_graphs_and_format_follows_its_suffix(trace_file, tmp_path):
    out = tmp_path / "drawings" / "step.dot"
    out.parent.mkdir()
    assert run(trace_file, "--out", out).exit_code == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["step-2.dot", "step.dot"]
    assert "MulBackward" in (out.parent / "step-2.dot").read_text()


def test_an_out_ending_in_a_slash_is_a_folder_made_for_the_pictures(trace_file, tmp_path):
    """`--out drawings/`: the folder is made and the graphs go inside it (it wrote one SVG
    file named "drawings")."""
    folder = tmp_path / "new" / "drawings"
    result = run(trace_file, "--out", f"{folder}/")
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in folder.iterdir()) == ["graph-2.svg", "graph.svg"]


def test_an_out_suffix_that_is_no_format_is_a_usage_error(trace_file, tmp_path):
    """`--out pic.jpg` wrote an SVG under that name; a number after a dot is no suffix."""
    line = usage_error(run(trace_file, "--graph", "1", "--out", tmp_path / "pic.jpg"))
    assert "genesis render draws svg, png, pdf, dot, not .jpg" in line and "--format" in line
    assert not (tmp_path / "pic.jpg").exists()
    assert run(trace_file, "--graph", "1", "--out", tmp_path / "pic.jpg", "-f", "dot").exit_code == 0
    assert (tmp_path / "pic.jpg").read_text().startswith("digraph")
    assert run(trace_file, "--graph", "1", "--out", tmp_path / "epoch.10").exit_code == 0
    assert (tmp_path / "epoch.10").read_text().lstrip().startswith("<")


def test_graph_number_keeps_its_file_name_and_a_folder_works_as_input(trace_file):
    assert run(trace_file.parent, "--graph", "2").exit_code == 0
    assert (trace_file.parent / "graph-2.svg").exists() and not (trace_file.parent / "graph.svg").exists()


def test_focus_by_name_draws_a_neighbourhood(trace_file, tmp_path):
    out = tmp_path / "focus.svg"
    result = run(trace_file, "--focus", "LogBackward", "--radius", "1", "--out", out)
    assert result.exit_code == 0, result.output
    assert "--focus 'LogBackward' is not in graph 2; not drawn" in result.output
    assert set(svg_nodes(out)) == {"SumBackward", "LogBackward", "ExpBackward"}
    assert "neighbourhood of LogBackward" in out.read_text()


def test_focus_by_id_and_by_parameter_name(trace_file, tmp_path, traced):
    weight = traced.graphs[0].find("0.weight").id
    by_name, by_id = tmp_path / "name.svg", tmp_path / "id.svg"
    assert run(trace_file, "--graph", "1", "--focus", "0.weight", "--radius", "1", "--out", by_name).exit_code == 0
    assert run(trace_file, "--graph", "1", "--focus", weight, "--radius", "1", "--out", by_id).exit_code == 0
    assert set(svg_nodes(by_name)) == set(svg_nodes(by_id)) == {"0.weight", "LinearBackward"}


def test_collapse_depth_folds_modules(trace_file, tmp_path):
    out = tmp_path / "folded.svg"
    assert run(trace_file, "--graph", "1", "--collapse-depth", "0", "--out", out).exit_code == 0
    nodes = svg_nodes(out)
    assert {"0  (Linear)", "1  (Tanh)", "2  (Linear)"} <= set(nodes)
    assert "0.weight" not in nodes and "LinearBackward" not in nodes


def test_bare_graph_json(tmp_path, traced):
    path = tmp_path / "graph.json"
    path.write_text(traced.graphs[1].to_json())
    assert run(path, "--out", tmp_path / "g.svg").exit_code == 0
    assert "MulBackward" in svg_nodes(tmp_path / "g.svg")


def test_mark_findings_tags_once_and_reports_dangling_findings(traced):
    log = traced.graphs[0].find("LogBackward")
    dangling = Finding("no_gradient", "warning", "w got no gradient", graph=5, node=0)
    problems = mark_findings(traced.graphs, traced.findings + traced.findings + [dangling])
    assert log.findings == ["nan"]
    assert problems == ["finding 'w got no gradient' points at node 0 of graph 6, which the trace "
                        "does not have; it is not drawn"]


def test_usage_errors(tmp_path, trace_file):
    assert "no such file:" in usage_error(run(tmp_path / "missing.json"))
    (tmp_path / "empty").mkdir()
    assert "a folder without a trace.json" in usage_error(run(tmp_path / "empty"))
    (tmp_path / "notes.json").write_text("not json")
    assert "is not JSON" in usage_error(run(tmp_path / "notes.json"))
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something.else"}))
    assert "is not a genesis trace.json or Graph JSON" in usage_error(run(tmp_path / "other.json"))
    (tmp_path / "old.json").write_text(json.dumps({"schema": "genesis.debug.Trace", "version": 99}))
    assert "written by a newer genesis" in usage_error(run(tmp_path / "old.json"))
    (tmp_path / "empty.json").write_text(Trace(script="x.py").to_json())
    assert "holds no graphs" in usage_error(run(tmp_path / "empty.json"))
    assert "--graph 3: the trace has 2 graphs; pick 1 to 2" in usage_error(run(trace_file, "--graph", "3"))
    assert "bad --format 'gif'" in usage_error(run(trace_file, "--format", "gif"))
    message = usage_error(run(trace_file, "--focus", "fc9.weight"))
    assert "--focus 'fc9.weight': no such node in any graph" in message and "LogBackward" in message
    assert "no such node in graph 1" in usage_error(run(trace_file, "--graph", "1", "--focus", "999"))
    assert "does not exist" in usage_error(run(trace_file, "--out", tmp_path / "nowhere" / "g.svg"))


def test_a_graphviz_failure_exits_1_with_its_message(trace_file, monkeypatch):
    import viz.backends

    monkeypatch.setattr(viz.backends.shutil, "which", lambda name: None)   # no system dot
    result = run(trace_file, "--format", "png")
    assert result.exit_code == 1
    assert result.output.startswith("error: format 'png' needs the Graphviz `dot` program")


def test_runs_as_a_module_in_a_subprocess(trace_file):
    out = trace_file.parent / "sub.svg"
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "render", str(trace_file), "--graph",
                                "1", "--out", str(out)], capture_output=True, text=True,
                               env={**os.environ, "NO_COLOR": "1"}, check=False)
    assert completed.returncode == 0, completed.stderr
    assert NAN_FILL in svg_nodes(out)["LogBackward"][1]
    missing = subprocess.run([sys.executable, "-m", "genesis_cli", "render", "missing.json"],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and missing.stderr.startswith("error: no such file")


# -- a file of the wrong shape: one line naming the file and the place, exit 2 ---------------

def _set(path):
    def change(data):
        target = data
        for key in path[:-2]:
            target = target[key]
        target[path[-2]] = path[-1]
    return change


def _delete(*path):
    def change(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


MALFORMED = [
    ("dangling edge", _set(("graphs", 0, "edges", 3, 1, 17)),
     "graphs[0].edges[3] points at node 17, which does not exist"),
    ("unknown node kind", _set(("graphs", 0, "nodes", 2, "kind", "layer")),
     "graphs[0].nodes[2].kind is 'layer', expected one of op, param, input, output, saved"),
    ("non-integer id", _set(("graphs", 0, "nodes", 1, "id", "1")),
     "graphs[0].nodes[1].id is the string '1', expected an integer"),
    ("missing node name", _delete("graphs", 0, "nodes", 0, "name"), "graphs[0].nodes[0] has no 'name' field"),
    ("missing top-level key", _delete("steps_seen"), "the file has no 'steps_seen' field"),
    ("edges not a list", _set(("graphs", 0, "edges", {})), "graphs[0].edges is an object, expected a list"),
    ("shape not a list", _set(("graphs", 0, "nodes", 0, "outputs", 0, 0, "2x2")),
     "graphs[0].nodes[0].outputs[0][0] is the string '2x2', expected a list"),
    ("statistic not a number", _set(("graphs", 0, "nodes", 0, "outputs", 0, 3, 0, "big")),
     "graphs[0].nodes[0].outputs[0][3].norm is the string 'big', expected a number or null"),
    ("finding of an unknown kind", _set(("findings", 0, "kind", "bad_vibes")),
     "findings[0].kind is 'bad_vibes', not a finding kind this genesis knows"),
    ("graph from a newer genesis", _set(("graphs", 1, "version", 99)),
     "graphs[1] was written by a newer genesis (Graph JSON schema version 99"),
    ("trace from a newer genesis", _set(("version", 99)),
     "the file was written by a newer genesis (trace.json schema version 99"),
]


@pytest.mark.parametrize("change, expected", [case[1:] for case in MALFORMED],
                         ids=[case[0] for case in MALFORMED])
def test_a_malformed_trace_is_one_line_naming_the_place(tmp_path, traced, change, expected):
    traced.graphs[0].nodes[0].outputs[0].grad = {"norm": 1.0, "max_abs": 1.0, "nan": 0, "inf": 0,
                                                  "zero_fraction": 0.0}
    data = json.loads(traced.to_json())
    change(data)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    message = usage_error(run(path))
    assert message.startswith(f"error: {path}: ") and expected in message, message
    assert not (tmp_path / "graph.svg").exists()


def test_unreadable_files_are_one_line_each(tmp_path, trace_file):
    text = trace_file.read_text()
    cut = tmp_path / "cut.json"
    for end in (len(text) // 2, len(text) - 1, 1):
        cut.write_text(text[:end])
        assert f"{cut} is not JSON: it ends before its JSON does (a file cut short?)" in usage_error(run(cut))
    binary = tmp_path / "picture.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert f"{binary} is not JSON: byte 0 (0x89) is not UTF-8 text" in usage_error(run(binary))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in usage_error(run(deep))
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    assert "is not a genesis trace.json or Graph JSON" in usage_error(run(listed))
    folder = tmp_path / "runs" / "trace.json"
    folder.mkdir(parents=True)  # a folder where the trace should be
    assert "a folder without a trace.json" in usage_error(run(folder))


def _json_values():
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 30), st.floats(allow_nan=False),
                        st.text(max_size=3), st.sampled_from(["NaN", "op", "genesis.debug.Graph"]))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                        max_leaves=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choices=st.data())
def test_any_damage_to_a_trace_is_read_or_refused_never_a_crash(tmp_path, traced, choices):
    """Replace or delete one value anywhere in a valid trace: reading and drawing it either
    works or stops with a usage error; nothing else escapes."""
    data = json.loads(traced.to_json())
    parent, key = None, None
    value = data
    while isinstance(value, (dict, list)) and value and (parent is None or choices.draw(st.booleans())):
        keys = list(value) if isinstance(value, dict) else list(range(len(value)))
        parent, key = value, choices.draw(st.sampled_from(keys))
        value = parent[key]
    if parent is None:
        return
    if isinstance(parent, dict) and choices.draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = choices.draw(_json_values())
    path = tmp_path / "trace.json"  # one file, written again for each example
    path.write_text(json.dumps(data))
    try:
        graphs, findings = load_graphs(path)
    except UsageError:
        return
    mark_findings(graphs, findings)
    for graph in graphs:
        to_dot(graph)


# -- --focus draws into a file of its own and says what it drew ----------------------------

def test_focus_writes_a_file_of_its_own_and_says_what_it_drew(trace_file, traced):
    assert run(trace_file).exit_code == 0
    full = (trace_file.parent / "graph.svg").read_text()
    result = run(trace_file, "--focus", "0.weight", "--radius", "1")
    assert result.exit_code == 0, result.output
    focused = trace_file.parent / "graph.focus-0.weight.svg"
    assert (trace_file.parent / "graph.svg").read_text() == full  # the full drawing is kept
    assert set(svg_nodes(focused)) == {"0.weight", "LinearBackward"}
    total = len(traced.graphs[0].nodes)
    assert f"drew 2 of {total} nodes within 1 edge of 0.weight (graph 1 of 2) → {focused}" in result.output
    assert "--focus '0.weight' is not in graph 2; not drawn" in result.output


def test_focus_by_id_names_the_node_and_numbers_later_graphs(trace_file, traced):
    multiply = traced.graphs[1].find("MulBackward").id
    result = run(trace_file, "--focus", multiply, "--radius", "2")
    assert result.exit_code == 0, result.output
    assert (trace_file.parent / f"graph-2.focus-{multiply}.svg").exists()
    assert (trace_file.parent / f"graph.focus-{multiply}.svg").exists()
    second = traced.graphs[1]
    assert f"within 2 edges of node {multiply} ({second.nodes[multiply].name}) (graph 2 of 2)" in result.output
