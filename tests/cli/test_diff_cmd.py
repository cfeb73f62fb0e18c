"""`genesis diff RUN_A RUN_B`: exit 0 and a plain sentence for runs that agree, 1 with the
changes located for runs that differ, 2 with one line for a missing or foreign file; the
HTML page draws both graphs with the changed nodes marked."""
import json

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from tests.debug.test_run_diff import traced_run
from tests.helpers import usage_error


def run(*args, cwd=None):
    return CliRunner().invoke(app, ["diff", *args], env={"COLUMNS": "200"})


@pytest.fixture
def runs(tmp_path):
    """Trace folders: `before`, `same` (a rerun of it), `gelu` (an activation changed) and
    `longer` (the same steps, and 4 more)."""
    folders = {}
    for name, options in (("before", {}), ("same", {}), ("gelu", {"activation": "gelu"}),
                          ("longer", {"steps": 8})):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "trace.json").write_text(traced_run(**options).to_json())
        folders[name] = str(folder)
    return folders


def test_runs_that_agree_say_so_and_exit_0(runs, tmp_path):
    page = tmp_path / "page.html"
    result = run(runs["before"], runs["same"], "--html", str(page))
    assert result.exit_code == 0, result.output
    assert "The runs do not differ" in result.output
    assert "do not differ" in page.read_text()


def test_runs_of_different_lengths_differ_and_say_so(runs, tmp_path):
    page = tmp_path / "page.html"
    result = run(runs["before"], runs["longer"], "--html", str(page))
    assert result.exit_code == 1, result.output
    said = "The runs made different numbers of backward calls: A 4, B 8"
    assert said in " ".join(result.output.split()) and said in page.read_text()
    assert "do not differ" not in result.output + page.read_text()


def test_runs_that_differ_are_located_and_exit_1(runs, tmp_path):
    page = tmp_path / "page.html"
    result = run(runs["before"], runs["gelu"], "--html", str(page))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.split()[:3] == ["1", "removed", "Relu"] for line in lines)
    assert any(line.split()[:3] == ["1", "added", "Gelu"] for line in lines)
    assert "(top module)" in result.output and "test_run_diff.py:" in result.output
    assert "Loss: first differs at step 0" in result.output
    text = page.read_text()
    assert text.count("<svg") == 2 and "#1565c0" in text.lower()  # both graphs, changes marked
    assert text.count("in this run only (genesis diff)") == 2  # the legend of each


def test_json_summary(runs):
    result = run(runs["before"] + "/trace.json", runs["gelu"] + "/trace.json", "--json", "--no-html")
    assert result.exit_code == 1
    summary = json.loads(result.output)
    assert summary["differ"] is True
    assert {change["what"] for change in summary["structure"]} == {"Relu", "Gelu"}
    assert summary["loss"]["first_step"] == 0


def test_no_html_writes_nothing(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(runs["before"], runs["same"], "--no-html").exit_code == 0
    assert not (tmp_path / "diff.html").exists()


def test_missing_and_foreign_files_are_one_line_usage_errors(runs, tmp_path):
    assert "no such file" in usage_error(run(runs["before"], str(tmp_path / "nowhere")))
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"schema": "something.else"}))
    assert "is not a genesis trace.json" in usage_error(run(str(foreign), runs["before"]))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "folder without a trace.json" in usage_error(run(str(empty), runs["before"]))


def test_an_unwritable_html_page_is_a_warning_not_a_lost_report(runs, tmp_path):
    result = run(runs["before"], runs["gelu"], "--html", str(tmp_path / "missing" / "page.html"))
    assert result.exit_code == 1
    assert "the HTML page was not written" in result.output
    assert "Loss: first differs" in result.output


TRAINED = """\
import genesis
import genesis.nn as nn
genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x, y = genesis.randn(16, 4), genesis.randn(16, 1)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad(); loss.backward(); optimizer.step()
"""


def test_gradient_norms_no_step_of_both_runs_measured_are_not_called_the_same(tmp_path):
    """Run B only evaluates (no backward): its parameters are those of A, but no step's
    gradient norm is known in both runs, so none was compared (it said "the same for all 4
    shared parameters")."""
    evaluated = TRAINED.replace("for step in range(3):", "with genesis.no_grad():").replace(
        "    optimizer.zero_grad(); loss.backward(); optimizer.step()\n", "")
    for name, body in (("trained", TRAINED), ("evaluated", evaluated)):
        (tmp_path / f"{name}.py").write_text(body)
        traced = CliRunner().invoke(app, ["trace", "-q", "--no-html", "--out", str(tmp_path / name),
                                          str(tmp_path / f"{name}.py")])
        assert traced.exit_code in (0, 4), traced.output
    page = tmp_path / "page.html"
    result = run(str(tmp_path / "trained"), str(tmp_path / "evaluated"), "--html", str(page))
    assert "Gradient norms not compared: no step's norms are known in both runs (4 shared " \
           "parameters)." in result.output
    assert "the same for all" not in result.output + page.read_text()
    assert "Gradient norms not compared" in page.read_text()


@pytest.mark.parametrize("losses, named", [
    ({"steps": [0, 1], "values": [0.5, "x"]}, "meta.losses.values[1] is the string 'x'"),
    ({"steps": [0, "1"], "values": [0.5, 0.4]}, "meta.losses.steps[1] is the string '1'"),
    ({"steps": [0, 1], "values": [0.5]}, "meta.losses has 2 steps and 1 values"),
    ({"values": [0.5]}, "meta.losses has no 'steps' field"),
    (True, "meta.losses is true, expected an object"),
])
def test_a_malformed_loss_history_is_a_one_line_usage_error(runs, tmp_path, losses, named):
    """The losses `genesis diff` compares are checked as the file is read, like the rest of it."""
    data = json.loads((tmp_path / "before" / "trace.json").read_text())
    data["meta"]["losses"] = losses
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    for pair in ((str(edited), runs["same"]), (runs["same"], str(edited))):
        assert named in usage_error(run(*pair, "--no-html"))


def test_runs_of_different_commands_say_so(runs, tmp_path):
    """A diff can't tell a change from another script: it says when the commands differ."""
    from genesis.debug.trace import Trace
    other = Trace.load(runs["same"] + "/trace.json")
    other.script, other.args = "evaluate.py", ["--lr", "0.1"]
    (tmp_path / "same" / "trace.json").write_text(other.to_json())
    page = tmp_path / "page.html"
    result = run(runs["before"], runs["same"], "--html", str(page))
    before = Trace.load(runs["before"] + "/trace.json").script
    assert "B ran evaluate.py --lr 0.1." in page.read_text()
    assert (f"The runs are of different commands: A ran {before}, B ran evaluate.py --lr 0.1."
            in " ".join(result.output.split()))
    assert json.loads(run(runs["before"], runs["same"], "--json", "--no-html").output)["scripts"] \
        == [before, "evaluate.py --lr 0.1"]
    assert "different commands" not in run(runs["before"], runs["gelu"], "--no-html").output
