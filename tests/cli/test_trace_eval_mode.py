"""`genesis trace` on training left in eval mode: a model.eval() (or train(False)) that
nothing undid before training resumed is found at its line, naming the modules it left in
eval mode and the first training step affected; the clean look-alikes in
tests/cli/data/eval_mode (validation then train(), early stopping, BatchNorm frozen on
purpose, a distillation teacher, fine-tuning in eval mode from the start, eval() inside a
step for adversarial examples or a gradient penalty, evaluation after training, an EMA
copy, a model whose modules' mode changes nothing, a GAN that samples in eval mode) give no
findings. The same bug written by hand (`m.training = False` on every module, or on a
Dropout) is found at the assignment's line; modes set back by hand each epoch and BatchNorm
frozen by hand are not. The same bug in a PyTorch script is found under --torch."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.helpers import line_of

SCRIPTS = Path(__file__).parent / "data" / "eval_mode"
CLEAN = sorted(SCRIPTS.glob("clean_*.py"))

# script, its eval() line, the modules named, the first training step affected, the module
# the call was made on
BUGGY = [
    ("buggy_validate_no_train.py", "    model.eval()", ["bn", "drop"], 4, "Classifier"),
    ("buggy_train_false.py", "            model.train(False)", ["2", "5"], 5, "Sequential"),
    ("buggy_encoder_eval_in_logging.py", "    model.encoder.eval()",
     ["encoder.norm", "encoder.drop"], 3, "encoder"),
    ("buggy_gan_sampling.py", "    G.eval()", ["G.1"], 17, "G"),
]


def traced(tmp_path, script: Path, *options) -> tuple:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", *options, "--out",
                                      str(out), str(script)])
    return result, Trace.load(out / "trace.json")


def as_pytorch(script: Path, folder: Path) -> Path:
    """`script` written for PyTorch: the same code, importing torch."""
    code = (script.read_text().replace("import genesis as torch", "import torch")
            .replace("import genesis.nn", "import torch.nn")
            .replace("from genesis.utils.data", "from torch.utils.data"))
    assert "genesis" not in code
    written = folder / script.name
    written.write_text(code)
    return written


def test_every_look_alike_the_rule_promises_is_here():
    assert {script.stem for script in CLEAN} >= {
        "clean_validate_then_train", "clean_early_stopping", "clean_frozen_batchnorm",
        "clean_distillation_teacher", "clean_finetune_in_eval_mode",
        "clean_adversarial_examples", "clean_gradient_penalty_in_eval",
        "clean_eval_after_training", "clean_ema_eval", "clean_no_mode_dependent_modules",
        "clean_modes_set_by_hand_each_epoch"}


@pytest.mark.parametrize("name, marker, modules, first, owner", BUGGY,
                         ids=[entry[0][:-3] for entry in BUGGY])
def test_training_left_in_eval_mode_is_found_at_the_eval_line(tmp_path, name, marker, modules,
                                                               first, owner):
    script = SCRIPTS / name
    result, trace = traced(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = trace.findings
    assert finding.kind == "left_in_eval_mode" and finding.severity == "warning"
    assert finding.source == f"{script}:{line_of(script, marker)}"
    assert finding.title == f"training went on in eval mode after {marker.strip()}"
    assert finding.details["modules"] == modules and finding.step == first
    assert finding.details["owner"] == owner and finding.module == owner
    said = " ".join(result.output.split())
    receiver = marker.strip().rsplit(".", 1)[0]
    assert f"Call {receiver}.train() before training resumes" in said
    assert f"no train() call set it back before training step {first}" in said


# script, its assignment line, the modules named, the first training step affected
BY_HAND = [
    ("buggy_modes_set_by_hand.py", "        module.training = False", ["bn", "drop"], 4),
    ("buggy_dropout_off_by_hand.py", "    model.drop.training = False", ["drop"], 4),
]


@pytest.mark.parametrize("name, marker, modules, first", BY_HAND,
                         ids=[entry[0][:-3] for entry in BY_HAND])
def test_a_mode_set_by_hand_is_found_at_the_assignment_line(tmp_path, name, marker, modules,
                                                            first):
    script = SCRIPTS / name
    result, trace = traced(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = trace.findings
    assert finding.kind == "left_in_eval_mode" and finding.details["by_hand"]
    assert finding.source == f"{script}:{line_of(script, marker)}"
    assert finding.title == f"training went on in eval mode after {marker.strip()}"
    assert finding.details["modules"] == modules and finding.step == first
    assert finding.module == "Classifier"
    said = " ".join(result.output.split())
    assert "This line set `training` to False by hand (not through train() or eval())" in said
    assert "Call train() on Classifier (or set `training` back to True)" in said


@pytest.mark.parametrize("script", CLEAN, ids=lambda path: path.stem)
def test_clean_look_alikes_have_no_findings(tmp_path, script):
    result, trace = traced(tmp_path, script)
    assert result.exit_code == 0, result.output
    assert trace.findings == [], [finding.title for finding in trace.findings]


def test_the_bug_in_a_pytorch_script_is_found_under_torch(tmp_path):
    script = as_pytorch(SCRIPTS / "buggy_validate_no_train.py", tmp_path)
    result, trace = traced(tmp_path, script, "--torch")
    assert result.exit_code == 1, result.output
    (finding,) = trace.findings
    assert finding.kind == "left_in_eval_mode"
    assert finding.source == f"{script}:{line_of(script, '    model.eval()')}"
    assert finding.details["modules"] == ["bn", "drop"] and finding.step == 4
    data = json.loads((tmp_path / "out" / "trace.json").read_text())
    assert data["meta"]["options"]["torch"] is True


def test_its_clean_look_alike_under_torch_has_no_findings(tmp_path):
    script = as_pytorch(SCRIPTS / "clean_validate_then_train.py", tmp_path)
    result, trace = traced(tmp_path, script, "--torch")
    assert result.exit_code == 0, result.output
    assert trace.findings == []
