"""Bugs that live in the training loop, each found at its line by `genesis trace`: a module
left out of the optimizer, a missing zero_grad (with SGD, and with Adam where nothing
explodes), a zero_grad between backward and step, a scheduler stepped before its
optimizer, a NaN first born late in a long run (its step, op, module and line, and a
replay file of that step's leaves). The clean look-alikes (gradient accumulation, frozen
layers, warm-up, a GAN, in-place zeroing) are in tests/cli/data/clean and give no findings
(test_trace_clean_code.py)."""
from typer.testing import CliRunner

import genesis
from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.cli.test_trace_cmd import BUGGY, trace
from tests.helpers import line_of
from tests.viz.html.test_page import script_blocks


def the_finding(tmp_path, name: str, kind: str):
    script = BUGGY / name
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = Trace.load(out / "trace.json").findings
    assert finding.kind == kind, finding.title
    return script, finding, result.output, out


def test_a_module_left_out_of_the_optimizer_is_named_with_the_line_that_built_it(tmp_path):
    script, finding, output, _ = the_finding(tmp_path, "param_not_in_optimizer.py", "not_optimized")
    assert finding.details["parameters"] == ["head.weight", "head.bias"]
    assert finding.source == f"{script}:{line_of(script, 'optimizer = genesis.optim.Adam(')}"
    assert "no optimizer holds them" in output and "never changed" in output


def test_a_missing_zero_grad_with_sgd_points_at_the_step(tmp_path):
    script, finding, output, _ = the_finding(tmp_path, "missing_zero_grad_sgd.py",
                                             "gradient_accumulation")
    assert finding.source == f"{script}:{line_of(script, 'optimizer.step()')}"
    assert finding.step == 1 and finding.details["steps_affected"] == finding.details["steps"] - 1
    assert "zero_grad()" in output


def test_a_missing_zero_grad_with_adam_is_found_though_nothing_explodes(tmp_path):
    script, finding, output, _ = the_finding(tmp_path, "missing_zero_grad_adam.py",
                                             "gradient_accumulation")
    assert finding.title == "gradients accumulate across Adam.step() calls: nothing clears them"
    assert finding.source == f"{script}:{line_of(script, 'optimizer.step()')}"
    assert set(finding.details["parameters"]) == {"hidden.weight", "hidden.bias", "out.weight",
                                                  "out.bias"}


def test_zero_grad_between_backward_and_step_points_at_the_zero_grad(tmp_path):
    script, finding, output, _ = the_finding(tmp_path, "zero_grad_after_backward.py",
                                             "gradients_cleared")
    assert finding.title == "SGD.step() ran after its gradients were cleared"
    assert finding.source == f"{script}:{line_of(script, '    optimizer.zero_grad()  # bug')}"
    assert finding.details["step_call"] == f"{script}:{line_of(script, '    optimizer.step()')}"
    assert finding.step == 0 and finding.details["steps_affected"] == 20
    assert (f"this zero_grad() call set every one of them to None between the backward call "
            f"and SGD.step() (line {line_of(script, '    optimizer.step()')}), so the step "
            "applied none of them") in " ".join(output.split())
    assert "Call zero_grad() before loss.backward()" in " ".join(output.split())


def test_clipping_to_zero_is_named_in_the_console_the_json_and_the_page(tmp_path):
    """No zero_grad() cleared these gradients: the finding names the clipping call, in the
    three places it is read, and does not ask about zero_grad()."""
    script = tmp_path / "clip_to_zero.py"
    script.write_text(
        "import genesis\nimport genesis.nn as nn\n"
        "model = nn.Linear(3, 1)\noptimizer = genesis.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = genesis.randn(16, 3)\n"
        "for step in range(3):\n"
        "    optimizer.zero_grad()\n"
        "    (model(x) ** 2).mean().backward()\n"
        "    nn.utils.clip_grad_value_(model.parameters(), 0.0)\n"
        "    optimizer.step()\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-color", "--out", str(out), str(script)])
    assert result.exit_code == 1, result.output
    (finding,) = Trace.load(out / "trace.json").findings
    assert finding.kind == "gradients_cleared" and finding.function == "clip_grad_value_"
    assert finding.source == f"{script}:{line_of(script, 'clip_grad_value_(')}"
    said = "this clip_grad_value_() call set every one of them to zeros between the backward call"
    page = script_blocks((out / "report.html").read_text(encoding="utf-8"))["genesis-data"]
    (shown,) = page["findings"]
    for text in (" ".join(result.output.split()), finding.message, shown["message"]):
        assert said in text and "zero_grad" not in text


def test_a_scheduler_stepped_before_its_optimizer(tmp_path):
    script, finding, output, _ = the_finding(tmp_path, "scheduler_before_optimizer.py",
                                             "scheduler_order")
    assert finding.title == "StepLR.step() called before SGD.step()"
    assert finding.source == f"{script}:{line_of(script, 'scheduler.step()  # bug')}"
    assert finding.severity == "warning"


def test_a_nan_born_late_is_found_at_its_step_with_a_replay_of_it(tmp_path):
    script, finding, output, out = the_finding(tmp_path, "late_nan.py", "nan_forward")
    assert finding.op == "LogBackward" and finding.module == "NoisyRegression"
    assert finding.source == f"{script}:{line_of(script, 'genesis.log(self.noise)')}"
    assert finding.step > 500  # long after the steps recorded in full
    assert f"first at step {finding.step} of 1000" in output
    replay = finding.details["replay"]
    assert replay["step"] == finding.step and replay["file"] == str(out / "nan_replay.pt")
    assert replay["parameters_are"] == "before the step's optimizer update"
    leaves = genesis.load(replay["file"])
    assert sorted(leaves["parameters"]) == ["mean.bias", "mean.weight", "noise"]
    assert leaves["step"] == finding.step and leaves["inputs"]
    # the step replays: the saved noise is where the log turns NaN
    assert float(leaves["parameters"]["noise"]) <= 0
    assert "leaves = genesis.load(" in output
