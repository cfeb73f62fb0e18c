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


@pytest.mark.parametrize("steps_seen, meta, error, said", [
    (5, {}, None, "nothing found"),
    (0, {}, None, "nothing checked: the script made no backward call"),
    (0, {"finished": False}, None, "nothing checked: the script made no backward call before "
     "it ended"),
    (0, {"real_torch": True}, None, "nothing checked: the script built its graphs with PyTorch "
     "itself (it imported torch), so genesis saw no backward call. Run it on genesis with "
     "`genesis trace --torch train.py`."),
    (0, {}, "Traceback ...\nValueError: bad", "nothing checked: the script raised before its "
     "first backward call (its traceback is under Run)"),
    (0, {"unsupported_torch": {"name": "torch.fft.fft", "where": "train.py:7"}},
     "Traceback ...\nUnsupportedTorchAPI: torch.fft.fft", "nothing checked: the script stopped at "
     "train.py:7, before its first backward call, at torch.fft.fft, which genesis does not "
     "serve yet"),
    (0, {"unsupported_torch": {"name": "torch.fft", "where": None}}, None, "nothing checked: the "
     "script stopped, before its first backward call, at torch.fft, which genesis does not "
     "serve yet"),
    (0, {"finished": False, "lost": True, "ended": "was killed by SIGKILL (signal 9)"}, None,
     "nothing checked: what the script's process captured was lost with it (it ended before "
     "sending it, and without a writable output folder it kept no journal to read it from); "
     "give --out a writable folder to keep it"),
    (5, {"finished": False, "ended": "was killed by SIGTERM (signal 15)"}, None,
     "nothing found in what was captured; the run did not finish, so the gradient checks did not run"),
])
def test_an_empty_findings_list_says_what_was_checked(session, tmp_path, steps_seen, meta, error,
                                                      said):
    """"nothing found" only when something was looked at: not for a run without a backward
    call, nor unqualified for a run that was killed before its gradient checks; and "no
    backward call" said only of a script that ran to its end without one (as the console
    says it: trace_report.what_was_checked)."""
    path = tmp_path / "report.html"
    viz.to_html(Trace(script="train.py", steps_seen=steps_seen, meta=meta, script_error=error), path)
    session.open(path)
    assert session.page.text_content("#findings-list") == said


@pytest.mark.parametrize("script, options, said", [
    (None, [], "nothing checked: the script raised before its first backward call (its "
     "traceback is under Run)"),
    (TORCH_SCRIPT.with_name("sparse_tensor.py"), ["--torch"], "nothing checked: the script "
     "stopped at {where}, before its first backward call, at torch.sparse_coo_tensor, which "
     "genesis does not serve yet"),
])
def test_a_script_that_stopped_before_backward_says_why_in_the_report(session, tmp_path, script,
                                                                      options, said):
    """Real runs that ended before their first backward call (the script raised; it stopped
    at a torch API genesis does not serve): the report says so, as the console does, not that
    the script made no backward call."""
    if script is None:
        script = tmp_path / "raises.py"
        script.write_text("import genesis\nx = genesis.ones(3, requires_grad=True)\n"
                          "raise ValueError('bad data')\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", *options, "--out", str(out), str(script)])
    unsupported = Trace.load(out / "trace.json").meta.get("unsupported_torch")
    said = said.format(where=unsupported and unsupported["where"])
    console = said[len("nothing"):].partition(" (its traceback")[0]  # stderr, there
    assert console in " ".join(result.output.split())
    session.open(out / "report.html")
    assert session.page.text_content("#findings-list") == said
    assert "the script raised" in session.page.text_content("#run-summary")
    assert unsupported is None or unsupported["where"].endswith("sparse_tensor.py:4")


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
