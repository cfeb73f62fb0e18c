"""`genesis trace --check-all` on clean code that looks like a bug: intended -inf masks
(causal attention, padding, a custom masked-softmax Function), straight-through
estimators, kinks and ties. Every one gets zero findings, its per-node checks say what
they skipped and why, and trace.json is strict JSON."""
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app

CLEAN = Path(__file__).parent / "data" / "clean"
SCRIPTS = sorted(CLEAN.glob("*.py"))


def _refuse(constant: str):
    raise AssertionError(f"trace.json holds the bare constant {constant}: not strict JSON")


def traced(tmp_path, script: Path) -> tuple:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--check-all",
                                      "--out", str(out), str(script)])
    text = (out / "trace.json").read_text()
    return result, json.loads(text, parse_constant=_refuse)


def test_every_clean_script_is_here():
    assert {script.stem for script in SCRIPTS} >= {
        "causal_attention", "straight_through", "kinks_and_ties", "masked_rows",
        "masked_softmax_function"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_clean_code_has_no_findings(tmp_path, script):
    result, trace = traced(tmp_path, script)
    assert result.exit_code == 0, result.output
    assert trace["findings"] == [], [finding["title"] for finding in trace["findings"]]
    said = " ".join(result.output.split())  # the console wraps long lines
    assert re.search(r"No findings in \d+ backward calls", said)  # 3, or a training run
    assert "no NaN or Inf that reached the loss, a gradient or a parameter" in said
    checks = trace["meta"]["checks"]
    assert checks and not [check for check in checks if check["status"] in ("fail", "error")]


def test_causal_attention_checks_count_what_they_skip_at_minus_inf(tmp_path):
    _, trace = traced(tmp_path, CLEAN / "causal_attention.py")
    checks = {check["function"]: check for check in trace["meta"]["checks"]
              if check["function"] in ("MaskedFill", "Softmax")}
    assert checks["MaskedFill"]["status"] == "pass"
    assert "output values are NaN/±inf here and were left out" in checks["MaskedFill"]["reason"]
    softmax = checks["Softmax"]
    assert softmax["status"] == "pass"
    assert softmax["reason"].startswith("40 of 100 input elements skipped: finite differences "
                                        "undefined at ±inf")


def test_kinks_and_ties_are_skipped_as_not_differentiable_here(tmp_path):
    _, trace = traced(tmp_path, CLEAN / "kinks_and_ties.py")
    skipped = {check["function"] for check in trace["meta"]["checks"] if check["status"] == "skipped"}
    assert {"Relu", "Clamp", "MaxAlongDim", "MinAlongDim"} <= skipped
    assert all("not differentiable here" in check["reason"] for check in trace["meta"]["checks"]
               if check["status"] == "skipped")
