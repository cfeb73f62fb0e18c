"""`genesis compare A B`: agreeing implementations exit 0, differing ones exit 1 with the
differing values located, usage errors exit 2 with one line."""
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from tests.helpers import usage_error

VARIANTS = str(Path(__file__).parent / "data" / "attention_variants.py")
SIGMOIDS = str(Path(__file__).parent / "data" / "sigmoids.py")
QKV = ["--shape", "2,4,8", "--shape", "2,4,8", "--shape", "2,4,8"]


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))


def run(*args):
    return CliRunner().invoke(app, ["compare", *args], env={"COLUMNS": "200"})


def test_a_fused_attention_and_the_naive_one_agree():
    result = run(f"{VARIANTS}:naive", f"{VARIANTS}:fused", *QKV)
    assert result.exit_code == 0, result.output
    assert "A and B agree: 4 values compared" in result.output
    for name in ("output", "gradient of q", "gradient of k", "gradient of v"):
        assert any(line.startswith(name) and "agree" in line for line in result.output.splitlines())


def test_a_wrongly_scaled_attention_differs_everywhere_with_its_worst_entries():
    result = run(f"{VARIANTS}:naive", f"{VARIANTS}:unscaled", *QKV)
    assert result.exit_code == 1, result.output
    assert "A and B differ in 4 of 4 values compared." in result.output
    assert "output: 64 of 64 entries differ" in result.output
    assert "index" in result.output and "A - B" in result.output


def test_a_custom_backward_against_autograd_names_the_missing_factor():
    result = run(f"{VARIANTS}:Square", f"{VARIANTS}:square")
    assert result.exit_code == 1
    assert "a missing factor 2?" in result.output
    assert "A and B differ in 1 of 2 values compared." in result.output


def test_a_forward_without_ctx_gets_all_its_inputs():
    # PyTorch's setup_context style: its first input was taken for ctx, so B got one too few
    path = Path(__file__).parent / "data" / "setup_context.py"
    result = run(f"{path}:Mul", f"{path}:product")
    assert result.exit_code == 0, result.output
    assert "inputs: 2 x (3, 4) random float64" in result.output
    assert "A and B agree: 3 values compared" in result.output


def test_outputs_of_different_shapes_are_said_to_differ_without_blaming_a_backward(tmp_path):
    path = tmp_path / "reductions.py"
    path.write_text("def ident(x):\n    return x\n\n\ndef col_sum(x):\n    return x.sum(0)\n")
    result = run(f"{path}:ident", f"{path}:col_sum")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "note: gradients not compared: the outputs' shapes differ" in said
    assert "backward raised" not in said and "A and B differ in 1 of 1 values compared." in said


def test_a_negative_or_nan_tolerance_is_a_usage_error():
    for option, value in (("--atol", "-1"), ("--rtol", "nan")):
        result = run(f"{SIGMOIDS}:GoodSigmoid", f"{SIGMOIDS}:GoodSigmoid", option, value)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f"Invalid value for '{option}': must be a finite number >= 0" in result.output


def test_module_classes_are_built_and_share_weights_by_name():
    result = run(f"{VARIANTS}:Mixer", f"{VARIANTS}:MixerAgain", "--shape", "3,8")
    assert result.exit_code == 0, result.output
    assert "gradient of parameter proj.weight" in result.output


def test_json_summary():
    result = run(f"{VARIANTS}:Square", f"{VARIANTS}:square", "--json")
    assert result.exit_code == 1
    summary = json.loads(result.output)
    assert summary["agree"] is False and summary["dtype"] == "float64"
    gradient = summary["values"][1]
    assert gradient["name"] == "gradient of x" and not gradient["agree"]
    assert gradient["differing"] == gradient["total"] == 12 and len(gradient["worst"]) == 5


def test_loose_tolerances_make_them_agree():
    result = run(f"{VARIANTS}:naive", f"{VARIANTS}:unscaled", *QKV, "--atol", "100")
    assert result.exit_code == 0


@pytest.mark.parametrize("args, words", [
    ([f"{VARIANTS}:nope", f"{VARIANTS}:square"], "no 'nope' there"),
    ([SIGMOIDS, f"{VARIANTS}:square"], "name one: file.py:Name"),
    ([f"{VARIANTS}:NeedsWidth", f"{VARIANTS}:Mixer"], "constructor needs arguments"),
    ([f"{VARIANTS}:square", f"{VARIANTS}:square", "--dtype", "int64"], "bad --dtype"),
    ([f"{VARIANTS}:square", f"{VARIANTS}:square", "--shape", "3,y"], "bad --shape"),
])
def test_usage_errors_are_one_line(args, words):
    assert words in usage_error(run(*args))
