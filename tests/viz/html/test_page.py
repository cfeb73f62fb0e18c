"""The viewer page as Python builds it (no browser): one self-contained file, data embedded
safely, SVG whitelisted, drawings that map every drawn item back to graph nodes."""
from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser

import pytest

import genesis
import viz
from genesis.debug import Graph, GraphNode, TensorInfo
from genesis.debug.findings import Finding
from genesis.debug.trace import Trace
from viz.html_views import draw_views
from viz.svg_clean import clean_svg

from . import reports


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and the text of each <script>."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.scripts = []
        self._in_script = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1][1] += data


def script_blocks(page: str) -> dict:
    """id -> parsed JSON of each <script type="application/json"> block."""
    return {attrs["id"]: json.loads(text) for attrs, text in Elements(page).scripts
            if attrs.get("type") == "application/json"}


@pytest.fixture(scope="module")
def hostile_page():
    return viz.to_html(reports.hostile_trace())


def test_page_is_one_self_contained_file(model_trace, tmp_path):
    path = tmp_path / "report.html"
    page = viz.to_html(model_trace, path)
    assert path.read_text(encoding="utf-8") == page
    elements = Elements(page)
    linking = [(tag, attrs) for tag, attrs in elements.tags
               if {"src", "href", "srcset", "action"} & set(attrs)]
    assert linking == []
    assert not any(tag in ("link", "iframe", "img", "object", "embed") for tag, _ in elements.tags)
    code = [text for attrs, text in elements.scripts if "type" not in attrs]
    assert len(code) == 1
    policy = next(attrs["content"] for tag, attrs in elements.tags
                  if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy  # only this script may run


def test_data_blocks_escape_what_could_end_a_script(hostile_page):
    blocks = re.findall(r'<script type="application/json" id="[\w-]+">(.*?)</script>', hostile_page, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}
    assert hostile_page.count("<script") == len(blocks) + 1
    assert "<img" not in hostile_page and "<svg onload" not in hostile_page
    data = script_blocks(hostile_page)["genesis-data"]
    assert data["run"]["script"] == reports.HOSTILE_SCRIPT
    assert data["findings"][0]["message"] == reports.HOSTILE_MESSAGE  # intact after JSON.parse
    assert reports.HOSTILE_MODULE in data["graphs"][0]["modules"]


def test_title_is_escaped(hostile_page):
    title = re.search(r"<title>(.*?)</title>", hostile_page, re.S).group(1)
    assert "<" not in title and "&lt;script&gt;" in title


def test_clean_svg_keeps_drawing_and_drops_everything_active():
    hostile = """<?xml version="1.0"?>
    <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 100 50"
         onload="alert(1)" style="background:url(http://x)">
      <script>alert(2)</script><style>*{}</style>
      <g id="graph0" class="graph" transform="translate(4 46)">
        <g id="node1" class="node" onclick="alert(3)"><title>n7</title>
          <g id="a_node1"><a xlink:href="javascript:alert(4)" xlink:title="tip">
            <polygon fill="#f2f2f2" stroke="#7a7a7a" points="0,0 10,0 10,10" onmouseover="alert(5)"/>
            <text x="5" y="5" font-size="11.00" text-anchor="middle"
              >&lt;img src=x onerror=alert(6)&gt; &amp; co</text>
            <text x="5" y="9" font-size="9.00" text-anchor="start">kept</text>
          </a></g>
        </g>
        <g id="edge1" class="edge"><title>n7&#45;&gt;n0</title><path d="M0,0L1,1" fill="none"/></g>
        <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
        <image xlink:href="http://example.com/x.png"/><use xlink:href="#node1"/>
        <animate attributeName="href" to="javascript:alert(7)"/>
      </g>
    </svg>"""
    clean = clean_svg(hostile)
    assert not re.search(r"script|style|onload|onclick|onmouseover|href|foreignObject|image|use|animate|"
                         r"http://x|example\.com|tip|id=", clean)
    assert clean.startswith('<svg xmlns="http://www.w3.org/2000/svg" data-width="100" data-height="50">'
                            '<g class="viewport"><g class="graph" transform="translate(4 46)">')
    assert '<g class="node" data-key="n7">' \
           '<polygon fill="#f2f2f2" stroke="#7a7a7a" points="0,0 10,0 10,10"/>' \
           '<text x="5" y="5">&lt;img src=x onerror=alert(6)&gt; &amp; co</text>' \
           '<text x="5" y="9" font-size="9.00" text-anchor="start">kept</text></g>' in clean
    assert '<g class="edge" data-edge="n7-&gt;n0"><path d="M0,0L1,1" fill="none"/></g>' in clean


def test_clean_svg_rejects_other_documents():
    with pytest.raises(ValueError, match="expected an <svg> document"):
        clean_svg("<html/>")


def test_every_drawing_maps_its_items_to_graph_nodes(model_trace):
    graph = model_trace.graphs[0]
    views = draw_views(graph)
    assert [(view.label, view.saved) for view in views] == [
        ("modules folded", False), ("modules folded below depth 1", False), ("all nodes", False),
        ("modules folded", True), ("modules folded below depth 1", True), ("all nodes", True)]
    for view in views:
        drawn = list(view.plain) + [node for group in view.groups.values() for node in group["members"]]
        expected = [node.id for node in graph.nodes if view.saved or node.kind != "saved"]
        assert sorted(drawn) == sorted(expected), view.label  # each node drawn exactly once
        keys = set(re.findall(r'<g class="node" data-key="(\w+)"', view.svg))
        assert {key for key in keys if not key.startswith("legend")} == \
            {f"n{node}" for node in view.plain} | set(view.groups)
        assert view.items == len(view.plain) + len(view.groups)
    folded = views[0].groups
    assert {group["title"] for group in folded.values()} == {"encoder", "head"}
    assert all(group["kind"] == "module" for group in folded.values())


def test_drawings_stay_within_the_node_budget_and_say_so():
    x = genesis.randn(3, requires_grad=True)
    y = x
    for _ in range(60):
        y = y * 1.01
    graph = genesis.debug.capture_graph(y.sum(), include_saved=False)
    view, = draw_views(graph, max_nodes=20)
    assert view.items <= 20
    assert any("compressed" in note for note in view.notes)
    chain = next(group for group in view.groups.values() if group["kind"] == "chain")
    assert len(chain["members"]) > 40


def test_default_view_is_the_finest_that_fits(model_trace, monkeypatch):
    monkeypatch.setattr("viz.html_report.DEFAULT_VIEW_ITEMS", 6)
    data = script_blocks(viz.to_html(model_trace))["genesis-data"]
    graph = data["graphs"][0]
    chosen = graph["views"][graph["default_view"]]
    assert not chosen["saved"] and chosen["items"] <= 6
    assert all(view["items"] <= chosen["items"] for view in graph["views"]
               if view["items"] <= 6 and not view["saved"])


def test_findings_tag_their_nodes_and_come_most_severe_first(model_trace):
    blocks = script_blocks(viz.to_html(model_trace))
    data = blocks["genesis-data"]
    assert [finding["severity"] for finding in data["findings"]] == ["error", "info"]
    culprit = data["findings"][0]["node"]
    assert "grad_mismatch" in blocks["graph-0"]["nodes"][culprit]["findings"]
    assert model_trace.graphs[0].nodes[culprit].findings == []  # the caller's graph is left alone


def test_non_finite_numbers_in_finding_details_survive(tmp_path):
    graph = Graph([GraphNode(0, "input", "x", [TensorInfo((1,), "float64")])])
    finding = Finding("nan_backward", "error", "NaN", graph=0, node=0,
                      details={"worst": [{"analytical": float("nan"), "numerical": float("inf")}]})
    page = viz.to_html(Trace(script="s.py", graphs=[graph], findings=[finding]))
    data = script_blocks(page)["genesis-data"]
    assert data["findings"][0]["details"]["worst"] == [{"analytical": "NaN", "numerical": "Infinity"}]


def test_bare_graph_gets_a_parameter_table_from_its_gradient_norms(model_trace):
    data = script_blocks(viz.to_html(model_trace.graphs[0]))["genesis-data"]
    rows = {row["name"]: row for row in data["parameters"]}
    assert set(rows) == {"encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"}
    assert rows["head.weight"]["shape"] == [4, 8] and len(rows["head.weight"]["history"]) == 3
    assert data["findings"] == [] and data["run"]["script"] is None


def test_a_tensor_is_captured_with_its_variable_names():
    weight = genesis.randn(3, requires_grad=True)
    loss = (weight * 2).sum()
    nodes = script_blocks(viz.to_html(loss))["graph-0"]["nodes"]
    assert {node["name"] for node in nodes} >= {"weight", "loss"}


def test_other_values_are_refused_clearly():
    with pytest.raises(TypeError, match="to_html takes a genesis.debug.Trace, a genesis.debug.Graph or a "
                                        "Tensor, got dict"):
        viz.to_html({})


def test_without_dot_the_embedded_graphviz_draws_the_page(monkeypatch, tmp_path, model_trace):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("dot") is None
    data = script_blocks(viz.to_html(model_trace.graphs[0]))
    views = data["genesis-data"]["graphs"][0]["views"]
    assert len(views) == 6
    assert all(data[f"svg-0-{index}"].startswith("<svg") for index in range(len(views)))


def test_repr_html_is_a_sandboxed_iframe(model_trace):
    output = model_trace.graphs[0]._repr_html_()
    assert re.fullmatch(r'<iframe srcdoc="[^"]*" sandbox="allow-scripts" style="[^"]*" '
                        r'title="[^"]*"></iframe>', output, re.S)
    assert "&lt;!DOCTYPE html&gt;" in output


def test_write_html_writes_the_page_to_html_makes_a_piece_at_a_time(tmp_path, monkeypatch):
    trace = reports.hostile_trace()
    pieces = []
    real_write = viz.html_report._write_pieces
    monkeypatch.setattr(viz.html_report, "_write_pieces",
                        lambda path, made: real_write(path, [p for p in made if pieces.append(p) or True]))
    viz.write_html(trace, tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == viz.to_html(trace)
    graph_text = trace.graphs[0].to_json()
    assert graph_text not in pieces  # its chunks were written one by one, never joined
