"""Any string a user can put into a name (module, parameter, script path): control characters,
XML-forbidden code points and lone surrogates included, never breaks DOT, SVG, HTML or the
console report. Names go through record() and every output, as in a real run."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

import genesis
from genesis import nn
from genesis.debug import record
from genesis.debug.printable import printable
from genesis.debug.trace import ParameterRow, Trace
from genesis_cli.commands.trace_report import print_report
from viz.dot import to_dot
from viz.html_report import to_html
from viz.svg_clean import clean_svg

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")

NASTY = "\x00\x01\x07\x1b\n\t\r\x7f\x85\x9f\ufffe\uffff\ud800\udcff\u2028\u202e<>&;\"'\\{}[]/#%"
characters = st.one_of(st.characters(exclude_categories=()), st.sampled_from(NASTY))
slow = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Scale(nn.Module):
    def __init__(self, parameter: str):
        super().__init__()
        self.part_name = parameter
        self.register_parameter(parameter, nn.Parameter(genesis.ones(2)))

    def forward(self, x):
        return x * self._parameters[self.part_name]


class Holder(nn.Module):
    """One Scale per (module name, parameter name), applied in turn."""

    def __init__(self, parts: list):
        super().__init__()
        self.part_names = [module for module, _ in parts]
        for module, parameter in parts:
            self.add_module(module, Scale(parameter))

    def forward(self, x):
        for name in self.part_names:
            x = self._modules[name](x).tanh()
        return x.sum()


TAKEN = set(dir(Holder([("m", "p")])))  # attribute names a new part may not use
names = st.text(characters, min_size=1, max_size=12).filter(lambda name: "." not in name and name not in TAKEN)
parts = st.lists(st.tuples(names, names), min_size=1, max_size=4, unique_by=lambda part: part[0])


def recorded_graph(parts: list):
    model = Holder(parts)
    with record() as recording:
        model(genesis.ones(2)).backward()
    (graph,) = recording.graphs
    return graph


def svg_texts(svg) -> list:
    root = ElementTree.fromstring(svg)
    return [element.text or "" for element in root.iter() if element.tag.rpartition("}")[2] == "text"]


def drawn_lines(name: str) -> list:
    """The lines a label shows for `name` (its own newlines break lines), as Graphviz trims them."""
    lines = [printable(line).strip() for line in name.replace("\r\n", "\n").split("\n")]
    return [line for line in lines if line]


@settings(slow, max_examples=12)
@given(parts=parts)
def test_names_survive_dot_and_svg(parts):
    graph = recorded_graph(parts)
    for module, parameter in parts:
        assert graph.find(f"{module}.{parameter}").kind == "param"
    assert {node.module for node in graph.of_kind("op")} == {module for module, _ in parts} | {""}
    source = to_dot(graph).source
    source.encode("utf-8")  # no lone surrogate reaches Graphviz
    done = subprocess.run(["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    texts = svg_texts(done.stdout)  # well-formed XML
    for module, parameter in parts:
        for line in drawn_lines(f"{module}.{parameter}") + drawn_lines(module):  # node, cluster
            assert any(line in text for text in texts), (line, texts)
    ElementTree.fromstring(clean_svg(done.stdout))


class _Title(HTMLParser):
    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.title, self._inside, self.blocks = None, None, []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self._inside = (tag, dict(attrs))
        if tag == "title":
            self.title = ""

    def handle_endtag(self, tag):
        self._inside = None

    def handle_data(self, data):
        if self._inside is None:
            return
        tag, attrs = self._inside
        if tag == "title":
            self.title += data
        elif tag == "script" and attrs.get("type") == "application/json":
            self.blocks.append(data)


def named_trace(parts: list, script: str) -> Trace:
    graph = recorded_graph(parts)
    return Trace(script=script, graphs=[graph], steps_seen=1, steps_recorded=1,
                 parameters=[ParameterRow(f"{module}.{parameter}", (2,), "float32", 1.5, history=[1.5])
                             for module, parameter in parts])


@settings(slow, max_examples=5)
@given(parts=parts, script=names)
def test_names_survive_the_html_page(parts, script):
    page = to_html(named_trace(parts, f"/tmp/{script}.py"))
    page.encode("utf-8")  # the file can be written
    parsed = _Title(page)
    assert parsed.title == f"genesis trace: {printable(f'/tmp/{script}.py')}"
    blocks = [json.loads(block) for block in parsed.blocks]  # strict JSON, every block
    assert [row["name"] for row in blocks[0]["parameters"]] == [
        re.sub("[\ud800-\udfff]", "\ufffd", f"{module}.{parameter}") for module, parameter in parts]
    for svg in blocks[1:]:
        if isinstance(svg, str):  # a drawing (the graph's nodes are a block of their own)
            ElementTree.fromstring(svg)


@settings(slow, max_examples=20)
@given(parts=parts, script=names)
def test_names_survive_the_console_report(parts, script):
    trace = named_trace(parts, f"{script}.py")
    stream = io.StringIO()
    console = Console(file=stream, width=400, color_system=None)
    print_report(console, trace, [], {"json": f"out/{script}/trace.json"})
    text = stream.getvalue()
    text.encode("utf-8")
    assert "\x1b" not in text and "\x00" not in text
    for module, parameter in parts:
        assert printable(f"{module}.{parameter}") in text
    assert printable(f"{script}.py") in text
