"""Reports of big graphs: a long chain of ops and a deep nest of modules. The page opens on
a collapsed drawing with only a summary of each graph parsed (its nodes wait in a block of
their own until a click or a search needs them), and details, search and expand still work.
How fast they open is measured by bench/trace_big_graphs.py, not asserted here."""
from __future__ import annotations

import json
import re

import pytest

import genesis
import viz
from genesis import nn
from genesis.debug import record
from genesis.debug.trace import Trace
from viz.html_views import draw_views

from .test_page import script_blocks

CHAIN_OPS = 20_000


def chain_trace(ops: int) -> Trace:
    x = genesis.randn(16, requires_grad=True)
    with record() as recording:
        y = x
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.0
        y.sum().backward()
    graph, = recording.graphs
    return Trace(script="chain.py", graphs=[graph], steps_recorded=1, steps_seen=1)


class Nest(nn.Module):
    """`levels` modules, each holding the next: scale, the inner module, tanh."""

    def __init__(self, levels: int):
        super().__init__()
        self.scale = nn.Parameter(genesis.ones(4))
        self.inner = Nest(levels - 1) if levels > 1 else None

    def forward(self, x):
        x = x * self.scale
        if self.inner is not None:
            x = self.inner(x)
        return x.tanh()


def nested_graph(levels: int):
    model = Nest(levels)
    with record() as recording:
        model(genesis.randn(2, 4)).sum().backward()
    graph, = recording.graphs
    return graph


@pytest.fixture(scope="module")
def chain_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "chain.html"
    return path, viz.to_html(chain_trace(CHAIN_OPS), path)


@pytest.fixture(scope="module")
def nested_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "nested.html"
    viz.to_html(nested_graph(20), path)
    return path


def test_the_page_opens_with_a_summary_and_keeps_the_nodes_for_later(chain_page):
    _, page = chain_page
    blocks = script_blocks(page)
    opening = blocks["genesis-data"]
    summary, = opening["graphs"]
    assert "nodes" not in summary and "edges" not in summary
    assert summary["ops"] == CHAIN_OPS + 1 and summary["node_count"] == CHAIN_OPS + 3
    assert summary["outputs"] == [0]
    assert len(blocks["graph-0"]["nodes"]) == CHAIN_OPS + 3
    assert len(json.dumps(opening)) < 200_000  # a list of the chain's ids, little else


def test_a_deep_nest_is_drawn_at_a_few_depths():
    views = draw_views(nested_graph(20))
    labels = [view.label for view in views if not view.saved]
    assert labels == ["modules folded"] + [f"modules folded below depth {depth}"
                                           for depth in (1, 2, 4, 8, 16)] + ["all nodes"]
    assert len(views) == 2 * len(labels)


def test_a_long_runs_page_does_not_carry_the_loss_of_every_step(tmp_path):
    """meta["losses"] (every step's loss, kept in trace.json for `genesis diff`) grows with the
    run; the page reads none of it (its charts draw the bounded meta["history"]), so a run of
    200,000 steps gets a page no bigger than a short run's."""
    trace = chain_trace(20)
    trace.meta["scaler_skips"] = 0
    short = tmp_path / "short.html"
    viz.write_html(trace, short)
    steps = 200_000
    trace.meta["losses"] = {"steps": list(range(steps)), "values": [1 / (1 + s) for s in range(steps)]}
    long = tmp_path / "long.html"
    viz.write_html(trace, long)
    assert long.stat().st_size == short.stat().st_size


def test_a_long_chain_opens_on_its_summary(session, chain_page):
    path, _ = chain_page
    page = session.page
    session.open(path)
    assert page.is_visible("#canvas svg")
    chain = page.locator("#canvas g.node[data-key^=c]")
    assert chain.count() == 1 and f"{CHAIN_OPS - 1:,} ops" in chain.text_content()
    assert page.locator("#canvas g.node").count() < 20
    assert "compressed" in page.text_content("#view-notes")


def test_the_chain_shows_its_ops_and_search_finds_each_one(session, chain_page):
    path, _ = chain_page
    page = session.page
    session.open(path)
    page.click("#canvas g.node[data-key^=c]")
    assert page.text_content("#details-title") == f"run of {CHAIN_OPS - 1:,} ops"
    assert f"Nodes inside ({CHAIN_OPS - 1:,})" in page.text_content("#details-body")
    page.fill("#search-input", "addbackward")
    assert page.text_content("#search-results li.summary").startswith(f"{CHAIN_OPS // 2:,} matches")
    page.keyboard.press("Enter")
    assert page.text_content("#details-title") == "AddBackward"
    assert "selected" in page.get_attribute("#canvas g.node[data-key^=c]", "class")
    assert "test_big_reports.py" in page.text_content("#details-body")


def test_a_deep_nest_opens_on_a_readable_drawing_and_expands(session, nested_report):
    page = session.page
    session.open(nested_report)
    options = page.locator("#view-select option").all_text_contents()
    assert len(options) == 7 and options[0].startswith("modules folded (")
    page.select_option("#view-select", index=0)
    folded = page.locator("#canvas g.node[data-key^=m]")
    assert folded.count() == 1
    folded.click()
    assert "folded module" in page.text_content("#details-body")
    page.click("#details-body >> text=expand: show these nodes one by one")
    assert not page.text_content("#view-select option:checked").startswith("modules folded (")
    assert page.locator("#canvas g.node.selected").count() >= 1
    assert re.fullmatch(r"\w+Backward|scale|inner\.\S+", page.text_content("#details-title"))
