"""What followed from a finding (`details["knock_on"]`, genesis.debug.findings.add_knock_on) in
the report's finding box: a list under "What followed from it", once (not also in the message
above it), with the parameters the finding starved (`details["starved"]`) as links that show
them as their rows under Parameters do, and "at step N" as a link to that step on the Training
charts; as plain text in a trace from before `starved` or without those charts. Every test
also fails on a console error, a page error or a network request (conftest.Session)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import genesis
import viz
from genesis import nn
from genesis.debug import record
from genesis.debug.findings import Finding, add_knock_on
from genesis.debug.step_series import StepSeries
from genesis.debug.trace import Trace
from genesis_cli.app import app

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "buggy" / "dead_relu_cascade.py"
HEADING = "What followed from it"


@pytest.fixture(scope="module")
def cascade(tmp_path_factory):
    out = tmp_path_factory.mktemp("cascade")
    result = CliRunner().invoke(app, ["trace", "--out", str(out), str(SCRIPT)])
    assert result.exit_code == 1, result.output  # one finding: the dead layer's
    return out / "report.html", Trace.load(out / "trace.json")


def open_finding(page, title: str) -> None:
    page.locator("#findings-list li").filter(has_text=title).locator(".finding-title").click()


def box_of(page, title: str):
    return page.locator("#details-body .finding-box").filter(has_text=title)


def selected_leaf(page, trace, name: str) -> bool:
    """Whether the graph shows parameter `name` selected, as a click on its row does."""
    graph, node = next((index, graph.find(name)) for index, graph in enumerate(trace.graphs)
                       if graph.find(name) is not None)
    return (page.text_content("#details-title") == name
            and page.locator(f'g.node.selected[data-key="n{node.id}"]').count() == 1)


def test_a_dead_layers_finding_links_the_parameters_it_starved(session, cascade):
    path, trace = cascade
    (finding,) = trace.findings
    starved = finding.details["starved"]
    page = session.page
    session.open(path)
    open_finding(page, finding.title)
    box = box_of(page, finding.title)
    text = box.text_content()
    assert text.count(HEADING) == 1 and text.count(finding.details["knock_on"][0]) == 1
    assert HEADING not in box.locator(".message").text_content()
    assert box.locator(".knock-on-list li").all_text_contents() == finding.details["knock_on"]
    assert box.locator(".knock-on-list button.link").all_text_contents() == starved
    rows = box.locator("table.kv th").all_text_contents()  # the lists are not rows too
    assert "knock on" not in rows and "starved" not in rows and "activation" in rows
    box.locator(".knock-on-list button.link", has_text="2.weight").click()
    assert selected_leaf(page, trace, "2.weight")
    # the same from the keyboard
    open_finding(page, finding.title)
    box.locator(".knock-on-list button.link", has_text="4.weight").focus()
    page.keyboard.press("Enter")
    assert selected_leaf(page, trace, "4.weight")
    # as a click on its row under Parameters does
    page.click('#parameters-table tr[data-parameter="0.bias"]')
    assert selected_leaf(page, trace, "0.bias")
    assert not session.problems, session.problems


def small_trace(findings: list, history: dict | None = None) -> Trace:
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with record() as recording:
        net(genesis.randn(5, 3)).sum().backward()
    return Trace(script="train.py", graphs=list(recording.graphs), findings=findings, steps_recorded=1,
                 steps_seen=10, meta={} if history is None else {"history": history})


def with_knock_on(finding: Finding, *lines: str) -> Finding:
    for line in lines:
        add_knock_on(finding, line)
    return finding


def test_knock_on_lines_without_starved_parameters_are_text(session, tmp_path):
    """A trace from before `details["starved"]` (and one without Training charts): the lines
    are listed once, as text, even where they name a parameter or a step."""
    dead = with_knock_on(Finding("dead_activation", "warning", "dead relu units in 1 (ReLU)",
                                 message="All 4 units of 1 (ReLU) were zero.", module="1", graph=0, node=0,
                                 details={"activation": "1", "dead_units": 4, "units": 4}),
                         "0.weight and 0.bias: gradient always zero (every gradient path to them passes through 1)")
    nan = with_knock_on(Finding("nan_forward", "error", "NaN in the output of 2 (Linear)", step=1,
                                message="The first NaN.", graph=0, node=1),
                        "also, at step 3: Inf in the output of 2 (Linear)")
    path = tmp_path / "report.html"
    viz.to_html(small_trace([dead, nan]), path)
    page = session.page
    session.open(path)
    for finding in (dead, nan):
        open_finding(page, finding.title)
        box = box_of(page, finding.title)
        assert box.text_content().count(HEADING) == 1
        assert box.locator(".message").text_content() == finding.message.split("\n")[0]
        assert box.locator(".knock-on-list li").all_text_contents() == finding.details["knock_on"]
        assert box.locator(".knock-on-list button").count() == 0
    assert not session.problems, session.problems


def test_a_later_step_links_to_the_training_charts(session, tmp_path):
    """A NaN finding's "also, at step N" goes to step N on the Training charts, with the
    finding in focus; a step the charts do not reach stays text."""
    loss = StepSeries()
    for step in range(10):
        loss.add(step, 1.0 / (step + 1))
    history = {"version": 1, "steps_seen": 10, "loss": loss.to_dict(), "parameters": {}, "activations": {}}
    nan = with_knock_on(Finding("nan_forward", "error", "NaN in the output of 2 (Linear)", step=1, graph=0, node=1),
                        "also, at step 7: Inf in the output of 2 (Linear)",
                        "also, at step 12: Inf in the gradient of 2 (Linear)")
    path = tmp_path / "report.html"
    viz.to_html(small_trace([nan], history), path)
    page = session.page
    session.open(path)
    open_finding(page, nan.title)
    box = box_of(page, nan.title)
    assert box.locator(".message").count() == 0  # the message was only its knock-on lines
    assert box.locator(".knock-on-list li").all_text_contents() == nan.details["knock_on"]
    link = box.locator(".knock-on-list button.link")
    assert link.all_text_contents() == ["step 7"]
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#training[data-ready]")
    assert page.is_visible("#training") and not page.is_visible("#details")
    markers = page.locator("#training g.step-marker:not([hidden])")
    assert markers.count() >= 1
    assert {markers.nth(i).get_attribute("data-step") for i in range(markers.count())} == {"7"}
    focus = page.text_content("#training-focus")
    assert nan.title in focus and "step 7: loss" in focus
    assert not session.problems, session.problems
