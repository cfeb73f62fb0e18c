"""What `genesis trace` does with the files of its output folder: a read-only output is
reported on one line and left as it was, and the files genesis wrote there before (its own
and `genesis render`'s) are cleared, never the user's other files."""
import os
import shutil
import stat
import subprocess
import textwrap
from collections import OrderedDict
from pathlib import Path

import pytest
from typer.testing import CliRunner

import genesis
import genesis.nn as nn
import viz
from genesis.debug.session import TraceSession
from genesis_cli.app import app
from genesis_cli.commands.trace_outputs import write_outputs
from genesis_cli.trace_settings import OutputSettings
from viz import backends

TRAINING = """\
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
loss = ((model(genesis.randn(16, 4)) - 1.0) ** 2).mean()
loss.backward()
"""


def write_script(tmp_path: Path, body: str = "", name: str = "train.py") -> Path:
    script = tmp_path / name
    script.write_text(TRAINING + textwrap.dedent(body))
    return script


def invoke(*arguments):
    return CliRunner().invoke(app, [*map(str, arguments)])


def trace(script: Path, out: Path, *options):
    return invoke("trace", "--no-color", "--out", out, *options, script)


def test_a_read_only_output_is_reported_on_one_line_and_left_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    kept = out / "trace.json"
    kept.write_text('{"kept": true}')
    kept.chmod(0o444)
    result = trace(write_script(tmp_path), out, "--no-html")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "trace.json" in line and "error" in line]
    assert lines == [f"error: can't write {kept}: the file is read-only; chmod u+w it, or write "
                     "elsewhere (nothing was left half-written)"]
    assert kept.read_text() == '{"kept": true}' and stat.S_IMODE(kept.stat().st_mode) == 0o444
    assert (out / "graph.svg").is_file()  # the other outputs are still written
    assert not [name for name in os.listdir(out) if ".tmp" in name or ".partial." in name]


def test_a_rerun_clears_renders_focus_pictures_but_not_the_users_files(tmp_path):
    out = tmp_path / "out"
    script = write_script(tmp_path)
    assert trace(script, out, "--format", "dot").exit_code == 0
    for focus in ("0.weight", "MeanBackward", "2.bias"):
        result = invoke("render", out / "trace.json", "--focus", focus, "--radius", "1")
        assert result.exit_code == 0, result.output
    focused = sorted(path.name for path in out.glob("graph.focus-*"))
    assert len(focused) == 3 and "graph.focus-0.weight.svg" in focused
    (out / "graph-2.focus-fc1.weight.png").write_bytes(b"from a run with two graphs")
    users = ["notes.txt", "graph.focus-notes.txt", "my.graph.focus-x.svg", "graph.svg.bak",
             "graph-final.svg", "trace.json.orig"]
    for name in users:
        (out / name).write_text("the user's")
    assert trace(script, out).exit_code == 0
    assert sorted(path.name for path in out.iterdir()) == sorted(
        ["trace.json", "graph.svg", "report.html", "metrics.jsonl", *users])


def test_a_read_only_picture_of_an_earlier_run_is_kept_with_a_warning(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    protected = out / "graph-3.svg"
    protected.write_text("<svg/>")
    protected.chmod(0o444)
    result = trace(write_script(tmp_path), out, "--no-html")
    assert result.exit_code == 0, result.output
    assert f"warning: kept {protected} from an earlier run: it is read-only" in result.output
    assert protected.read_text() == "<svg/>"


def test_a_small_graphs_picture_and_report_are_laid_out_by_one_run_of_dot(tmp_path, monkeypatch):
    # The picture of a small graph is one of report.html's views: laid out once, and the
    # file is what drawing it alone gives.
    if shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed")
    session = TraceSession(steps=1, check=False)
    with session:
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        model(genesis.randn(3, 4)).sum().backward()
    trace = session.result(script="train.py")
    monkeypatch.setattr(backends, "_RECENT_LAYOUTS", OrderedDict())
    runs, real_run = [], subprocess.run
    monkeypatch.setattr(backends.subprocess, "run",
                        lambda *args, **kwargs: runs.append(args) or real_run(*args, **kwargs))
    files, problems = write_outputs(trace, OutputSettings(str(tmp_path), "svg", True, None, 200))
    assert problems == [] and files["html"] and len(files["graphs"]) == 1
    assert len(runs) == 1
    backends._RECENT_LAYOUTS.clear()
    alone = viz.render(trace.graphs[0], tmp_path / "alone.svg", max_nodes=200)
    assert Path(files["graphs"][0]).read_bytes() == alone.read_bytes()
    assert len(runs) == 2


def test_quiet_says_nothing_was_written_when_the_output_folder_cannot_be_made(tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file where the output folder should go")
    result = trace(write_script(tmp_path), blocker / "run", "--quiet")
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.endswith("; nothing written (the messages above say why)"), result.output
    assert "written to" not in last
