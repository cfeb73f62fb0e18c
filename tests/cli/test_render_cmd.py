"""`genesis render`: redraw a saved trace (SVG and DOT; findings coloured; --graph, --out,
--focus, --collapse-depth), bare Graph JSON, and the usage errors (exit 2)."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

import genesis
from genesis import nn
from genesis.debug import record
from genesis.debug.findings import Finding
from genesis.debug.trace import Trace
from genesis_cli.app import app
from genesis_cli.commands.render import mark_findings
from tests.helpers import usage_error
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
    assert "is not a valid genesis trace" in usage_error(run(tmp_path / "old.json"))
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
