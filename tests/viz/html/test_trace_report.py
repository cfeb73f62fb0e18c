"""The report that `genesis trace` writes, opened in headless Chromium: the graph is shown,
the finding points at the culprit with its worst entries, search and zoom work, and the
page stays offline and error-free (conftest.Session fails the test otherwise)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import viz
from genesis.debug.trace import Trace
from genesis_cli.app import app

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "buggy" / "wrong_backward.py"
TORCH_SCRIPT = Path(__file__).resolve().parents[2] / "cli" / "data" / "torch" / "classifier.py"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace")
    result = CliRunner().invoke(app, ["trace", "--out", str(out), str(SCRIPT)])
    assert result.exit_code == 1, result.output  # one finding
    return out, Trace.load(out / "trace.json")


def test_trace_report_shows_the_culprit(session, traced):
    out, trace = traced
    page = session.page
    session.open(out / "report.html")
    assert page.is_visible("#canvas svg")
    (finding,) = trace.findings
    item = page.locator("#findings-list li").first
    assert "wrong gradient in SoftSign.backward" in item.text_content()
    item.click()
    selector = f'g.node[data-key="n{finding.node}"]'
    assert "selected" in page.get_attribute(selector, "class")
    assert page.text_content("#details-title") == "SoftSignBackward"
    details = page.text_content("#details-body")
    assert "SoftSign" in details and "(32, 8)" in details and "wrong_backward.py:31" in details
    assert page.locator("#details-body table.entries").filter(has_text="analytical").count() == 1


def test_trace_report_search_and_zoom(session, traced):
    out, _ = traced
    page = session.page
    session.open(out / "report.html")
    page.fill("#search-input", "hidden.weight")
    results = page.locator("#search-results li[data-node]")
    assert results.count() >= 1 and "hidden.weight" in results.first.text_content()
    before = page.get_attribute("#canvas g.viewport", "transform")
    page.keyboard.press("Escape")
    page.click("#canvas")
    page.keyboard.press("+")
    page.wait_for_function("before => document.querySelector('#canvas g.viewport')"
                           ".getAttribute('transform') !== before", arg=before)


@pytest.mark.parametrize("steps_seen, meta, said", [
    (5, {}, "nothing found"),
    (0, {}, "nothing checked: the script made no backward call"),
    (0, {"real_torch": True}, "nothing checked: the script built its graphs with PyTorch itself "
     "(it imported torch), so genesis saw no backward call. Run it on genesis with "
     "`genesis trace --torch train.py`."),
    (5, {"finished": False, "ended": "was killed by SIGTERM (signal 15)"},
     "nothing found in what was captured; the run did not finish, so the gradient checks did not run"),
])
def test_an_empty_findings_list_says_what_was_checked(session, tmp_path, steps_seen, meta, said):
    """"nothing found" only when something was looked at: not for a run without a backward
    call, nor unqualified for a run that was killed before its gradient checks."""
    path = tmp_path / "report.html"
    viz.to_html(Trace(script="train.py", steps_seen=steps_seen, meta=meta), path)
    session.open(path)
    assert session.page.text_content("#findings-list") == said


def test_a_pytorch_script_traced_without_torch_gets_the_hint_in_the_report(session, tmp_path):
    """The --torch hint the console and --quiet line give is in report.html too."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--out", str(out), str(TORCH_SCRIPT)])
    assert result.exit_code == 4, result.output  # nothing checked
    session.open(out / "report.html")
    said = session.page.text_content("#findings-list")
    assert "built its graphs with PyTorch itself" in said
    assert f"genesis trace --torch {TORCH_SCRIPT}" in said
