"""Which backward call ("step") each gradient figure is from: the parameter panel, the
console table and the drawing say it, and show the same number for the same step."""
from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

import genesis
import viz
from genesis import nn
from genesis.debug.session import TraceSession
from genesis_cli.commands.trace_report import print_report
from viz.style import format_number


@pytest.fixture(scope="module")
def stepped_trace():
    """Five backward calls: four training steps (one structure: steps 0, 1, 3, 4) and, after
    step 1, one with another structure (step 2)."""
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    x = genesis.randn(8, 3)
    with TraceSession(steps=10) as session:
        for step in range(4):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
            if step == 1:
                optimizer.zero_grad()
                (model(x).sum() * 3).backward()
    return session.result(script="train.py")


def test_the_trace_numbers_steps_as_the_graphs_do(stepped_trace):
    training, other = stepped_trace.graphs
    assert (training.steps, other.steps) == ([0, 1, 3, 4], [2])
    row = next(row for row in stepped_trace.parameters if row.name == "0.weight")
    assert row.steps == [0, 1, 2, 3, 4] and row.grad_norm_step == 4
    for graph in (training, other):  # the drawing's figure is its last step's, as in the row
        drawn = graph.find("0.weight").outputs[0].grad["norm"]
        assert drawn == pytest.approx(row.history[row.steps.index(graph.steps[-1])])


def test_the_drawing_labels_its_gradient_norms_with_their_step(stepped_trace):
    training, other = stepped_trace.graphs
    row = next(row for row in stepped_trace.parameters if row.name == "0.weight")
    source = viz.to_dot(training).source
    assert "gradient norms of step 4, the last of them" in source
    assert f"0.weight\\n(4, 3) float32\\ngrad norm {format_number(row.history[4])}\\nat step 4" in source
    assert f"grad norm {format_number(row.history[2])}\\nat step 2" in viz.to_dot(other).source


def test_the_console_table_says_the_step_of_each_norm(stepped_trace):
    stream = io.StringIO()
    print_report(Console(file=stream, width=120, color_system=None), stepped_trace, [], {})
    row = next(row for row in stepped_trace.parameters if row.name == "0.weight")
    text = stream.getvalue()
    assert re.search(r"grad norm\s+at step", text)
    assert re.search(rf"0\.weight\s+4x3\s+{re.escape(format_number(row.grad_norm))}\s+4\s+PASS", text)


def test_the_parameter_panel_says_the_step_and_matches_the_drawing(session, tmp_path, stepped_trace):
    path = tmp_path / "report.html"
    viz.to_html(stepped_trace, path)
    page = session.page
    session.open(path)
    row = next(row for row in stepped_trace.parameters if row.name == "0.weight")
    cell = page.locator('#parameters-table tr[data-parameter="0.weight"] td.num')
    assert cell.text_content() == f"{format_number(row.grad_norm)}step 4"
    assert "at step 4" in cell.get_attribute("title")
    sparkline_title = page.locator('#parameters-table tr[data-parameter="0.weight"] svg title')
    assert "over 5 steps (0 to 4)" in sparkline_title.text_content()
    drawn = page.text_content("#canvas svg").replace("\xa0", " ")  # the texts of the drawing, run together
    assert f"grad norm {format_number(row.grad_norm)}at step 4" in drawn
