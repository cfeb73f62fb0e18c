"""`genesis trace` on the example scripts: findings, source lines, exit statuses, outputs."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.helpers import line_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BUGGY = EXAMPLES / "buggy"


def trace(tmp_path, script, *options):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out", str(out),
                                      *options, str(script)])
    return result, out


def findings(out) -> list:
    return Trace.load(out / "trace.json").findings


def test_wrong_backward_is_found_at_its_call_site(tmp_path):
    script = BUGGY / "wrong_backward.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = findings(out)
    assert finding.kind == "gradient_mismatch" and finding.function == "SoftSign"
    assert finding.source == f"{script}:{line_of(script, 'SoftSign.apply(')}"
    assert "worst" in finding.details and finding.details["worst"]
    assert "wrong gradient in SoftSign.backward" in result.output
    assert "analytical" in result.output and "numerical" in result.output


def test_nan_from_log_of_zero_points_at_its_birth_and_names_the_log(tmp_path):
    script = BUGGY / "nan_log.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1
    # one finding: the NaN that 0 * -inf makes, born in the Mul on the loss line, naming the
    # Log whose -inf it came from; what followed (NaN gradients) is told inside it
    (first,) = findings(out)
    assert first.kind == "nan_forward" and first.title == "NaN born in forward: Mul"
    assert first.op == "MulBackward" and first.source == f"{script}:{line_of(script, '.log()')}"
    assert "Inf in Log (born there from finite inputs)" in first.message
    assert "of 64 values are NaN" in first.message


def test_detached_parameter_is_reported_with_the_modules_call(tmp_path):
    script = BUGGY / "detached_param.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1
    (finding,) = findings(out)
    assert finding.kind == "no_gradient" and finding.module == "embed"
    assert finding.details["parameters"] == ["embed.weight", "embed.bias"]
    assert finding.source == f"{script}:{line_of(script, '.detach()')}"


def test_exploding_gradient_is_reported(tmp_path):
    script = BUGGY / "exploding.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1
    exploding, = findings(out)
    assert exploding.kind == "exploding_gradient"
    assert exploding.details["parameters"] == ["2.weight", "2.bias"]
    assert exploding.source == f"{script}:{line_of(script, 'model(x)')}"
    # the first layer's tanh saturates as its weights blow up: its gradient falls to zero, a
    # consequence told inside the exploding finding
    assert exploding.details["then_vanishing"] == ["0.weight", "0.bias"]
    assert "Meanwhile the gradients of 0.weight and 0.bias vanished" in exploding.message
    trace_file = Trace.load(out / "trace.json")
    assert trace_file.steps_seen == 12 and trace_file.steps_recorded == 1
    assert {row.name: row.status for row in trace_file.parameters} == {
        "0.weight": "vanishing", "0.bias": "vanishing", "2.weight": "exploding",
        "2.bias": "exploding"}


def test_in_place_modification_exits_3_and_still_writes_everything(tmp_path):
    script = BUGGY / "inplace_saved.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 3
    assert "Traceback" in result.output and "SavedTensorModifiedError" in result.output
    (finding,) = findings(out)
    assert finding.kind == "inplace_modified" and finding.op == "SigmoidBackward"
    # the finding points at the line that changed it; the message names the op that saved it
    assert finding.source == f"{script}:{line_of(script, 'gate.mul_(2)')}"
    assert f"inplace_saved.py:{line_of(script, 'w.sigmoid()')}) saved it" in finding.message
    assert (out / "graph.svg").exists()
    assert Trace.load(out / "trace.json").script_error


@pytest.mark.parametrize("options", [(), ("--check-all",), ("--steps", "3")])
def test_clean_scripts_have_no_findings(tmp_path, options):
    for script in (EXAMPLES / "clean_kinks.py",):
        result, out = trace(tmp_path, script, *options)
        assert result.exit_code == 0, result.output
        assert findings(out) == []
        assert "No findings" in result.output


def test_clean_kinks_are_skipped_not_flagged(tmp_path):
    result, out = trace(tmp_path, EXAMPLES / "clean_kinks.py", "--check-all")
    checks = Trace.load(out / "trace.json").meta["checks"]
    reasons = {check["function"]: check["reason"] for check in checks if check["status"] == "skipped"}
    assert "not differentiable here" in reasons["Relu"]
    assert "nondeterministic" in reasons["Dropout"]
    assert not [check for check in checks if check["status"] == "fail"]


def test_outputs_written_and_svg_is_xml(tmp_path):
    result, out = trace(tmp_path, BUGGY / "wrong_backward.py", "--collapse-depth", "0")
    root = ElementTree.parse(out / "graph.svg").getroot()
    assert root.tag.endswith("svg")
    loaded = Trace.load(out / "trace.json")
    assert loaded.graphs and loaded.findings[0].graph == 0 and loaded.findings[0].node is not None
    assert "grad_mismatch" in loaded.graphs[0].nodes[loaded.findings[0].node].findings


def test_script_arguments_and_sys_exit(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint('argv', sys.argv[1:])\nsys.exit(int(sys.argv[2]))\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--out", str(out), str(script),
                                      "--code", "5"])
    assert "argv ['--code', '5']" in result.output and result.exit_code == 5
    assert (out / "trace.json").exists()
    result = CliRunner().invoke(app, ["trace", "--no-html", "--out", str(out), str(script), "--",
                                      "--code", "0"])
    # sys.exit(0) with no backward call: nothing was checked, which is not a clean pass
    assert "argv ['--code', '0']" in result.output and result.exit_code == 4
    assert "Nothing was checked: the script made no backward call" in result.output


def test_json_summary_on_stdout(tmp_path):
    script = BUGGY / "detached_param.py"
    completed = subprocess.run(
        [sys.executable, "-m", "genesis_cli", "trace", "--json", "--no-html", "--out",
         str(tmp_path / "out"), str(script)], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(EXAMPLES.parent), os.environ.get("PYTHONPATH", "")])})
    assert completed.returncode == 1, completed.stderr
    summary = json.loads(completed.stdout)
    assert summary["counts"]["warning"] == 1 and summary["findings"][0]["kind"] == "no_gradient"
    assert summary["status"] == 1 and summary["exit_code"] == 0  # genesis trace's, the script's
    assert "loss" in completed.stderr  # the script's own prints went to stderr


def test_quiet_prints_one_line(tmp_path):
    result, _ = trace(tmp_path, BUGGY / "detached_param.py", "--quiet")
    lines = [line for line in result.output.splitlines() if line.strip() and not line.startswith("loss")]
    assert len(lines) == 1 and "1 finding (0 errors, 1 warning)" in lines[0]


def test_quiet_says_how_a_script_that_failed_ended(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import sys\nimport genesis\n"
                      "w = genesis.ones(2, requires_grad=True)\n(w * w).sum().backward()\n"
                      "sys.exit(5)\n")
    result, _ = trace(tmp_path, script, "--quiet")
    assert result.exit_code == 5
    assert "no findings in 1 backward call; script exit status 5; written to" in result.output


@pytest.mark.parametrize("arguments, message", [
    (["trace", "missing_script.py"], "script not found"),
    (["trace", "--format", "gif", str(BUGGY / "exploding.py")], "--format must be one of"),
])
def test_usage_errors_exit_2(arguments, message):
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2 and message in result.output


def test_bad_option_value_exits_2():
    result = CliRunner().invoke(app, ["trace", "--steps", "0", "x.py"])
    assert result.exit_code == 2


def test_an_unrolled_cell_is_one_cluster_per_call_and_checks_clean(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--check-all", "--out",
                                      str(out), str(EXAMPLES / "rnn_cell.py"), "--steps", "3"])
    assert result.exit_code == 0, result.output
    assert findings(out) == []
    graph = Trace.load(out / "trace.json").graphs[0]
    assert {"cell", "cell#2", "cell#7"} <= set(graph.modules) and "cell#8" not in graph.modules
    assert graph.modules["cell#7"] == "GRUCell"
