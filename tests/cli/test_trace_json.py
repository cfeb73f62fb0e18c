"""`genesis trace --json` prints strict JSON: a non-finite number (a NaN gradient norm) is
the string "NaN", "Infinity" or "-Infinity", as in trace.json, never a bare NaN literal."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NAN_LOSS = """\
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
layer = nn.Linear(3, 1)
loss = (layer(genesis.randn(4, 3)) * float("nan")).sum()
loss.backward()
"""


def strict_loads(text: str):
    def refuse(literal):
        raise ValueError(f"--json printed the non-JSON literal {literal}")
    return json.loads(text, parse_constant=refuse)


def test_a_nan_gradient_norm_is_printed_as_the_string_nan(tmp_path):
    script = tmp_path / "nan_loss.py"
    script.write_text(NAN_LOSS)
    completed = subprocess.run(
        [sys.executable, "-m", "genesis_cli", "trace", "--json", "--no-html", "--out",
         str(tmp_path / "out"), str(script)], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert completed.returncode == 1, completed.stderr
    summary = strict_loads(completed.stdout)
    norms = {row["name"]: row["grad_norm"] for row in summary["parameters"]}
    assert norms == {"weight": "NaN", "bias": "NaN"}, norms
    assert summary["counts"]["error"] >= 1
