"""The compat corpus (tests/compat/programs): PyTorch programs written as their users write
them run unchanged under `genesis trace --torch`, to the end, with zero findings; with
PyTorch importable, they start from PyTorch's initial weights and match its losses step
for step within float32 tolerance."""
import atexit
import functools
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from genesis_cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))
LOSS = re.compile(r"^loss (\d+) (.+)$", re.MULTILINE)


def losses(output: str) -> dict:
    return {int(step): [float(value) for value in values.split()]
            for step, values in LOSS.findall(output)}


def test_the_corpus_covers_what_programs_do():
    assert {program.stem for program in PROGRAMS} >= {
        "mlp_dataloader", "cnn", "gpt", "gan", "custom_function", "char_lstm", "lbfgs_fit", "vae"}


def _with_torch(program: Path, tmp_path: Path):
    """PyTorch's losses for `program`, and the file of its initial weights; (None, None)
    without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        return None, None
    weights = tmp_path / "initial.npz"
    stdout, stderr = tmp_path / "torch.out", tmp_path / "torch.err"
    returncode = _torch_runner().run(program, {"SAVE_WEIGHTS": str(weights)}, stdout, stderr)
    assert returncode == 0, stderr.read_text()
    return losses(stdout.read_text()), weights


class _TorchRunner:
    """tests/compat/torch_runner.py in a process of its own: this worker's PyTorch runs."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-m", "tests.compat.torch_runner"],
                                        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)

    def run(self, program: Path, env: dict, stdout: Path, stderr: Path) -> int:
        request = {"program": str(program), "env": env, "stdout": str(stdout), "stderr": str(stderr)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, "tests/compat/torch_runner.py ended (see its output above)"
        return json.loads(answer)["returncode"]


@functools.cache
def _torch_runner() -> _TorchRunner:
    runner = _TorchRunner()
    atexit.register(runner.process.stdin.close)
    return runner


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda path: path.stem)
def test_runs_clean_under_trace_torch_and_matches_pytorch(tmp_path, program, monkeypatch):
    expected, weights = _with_torch(program, tmp_path)
    if weights is not None:
        monkeypatch.setenv("LOAD_WEIGHTS", str(weights))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--torch", "--no-html", "--no-color", "--out",
                                      str(out), str(program)])
    trace = json.loads((out / "trace.json").read_text())
    assert result.exit_code == 0, result.output
    assert trace["findings"] == [] and trace["steps_seen"] >= 5
    mine = losses(result.output)
    assert len(mine) >= 5 and all(np.isfinite(values).all() for values in mine.values())
    if expected is None:
        pytest.skip("PyTorch is not installed: ran clean, losses not compared")
    assert sorted(mine) == sorted(expected)
    for step in expected:
        np.testing.assert_allclose(mine[step], expected[step], rtol=2e-4, atol=1e-5,
                                   err_msg=f"{program.name}: loss at step {step}")
