"""`genesis trace -m MODULE ARGS`: a module runs as `python -m MODULE ARGS` runs it (a package
runs its `__main__`), with the other options of genesis trace; the trace names `-m MODULE`,
and a module that is not there is one line, before anything runs."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from genesis_cli.runner import ScriptNotFound, run_module

# what the module sees of how it was run, printed as python -m would give it
WHERE = ("print('ran as', __name__, __package__, __spec__.name, repr(sys.argv), __file__, "
         "sys.path[0])\n")

TRAINING = """\
import argparse
import sys

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    genesis.manual_seed(0)
    model = Net()
    optimizer = genesis.optim.SGD(model.parameters(), lr=args.lr)
    x, y = genesis.randn(16, 4), genesis.randn(16, 1)
    for step in range(args.steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    print("trained", args.steps, "steps at lr", args.lr)


if __name__ == "__main__":
    main()
"""

TORCH_TRAINING = """\
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(4):
    optimizer.zero_grad()
    loss = ((model(torch.randn(16, 4)) - 1.0) ** 2).mean()
    loss.backward()
    optimizer.step()
"""


def package(root: Path, name: str, modules: dict) -> Path:
    """A package `name` under `root` with `modules` ({file name: text}) and an empty __init__."""
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text(modules.pop("__init__.py", ""))
    for file, text in modules.items():
        (folder / file).write_text(textwrap.dedent(text))
    return folder


def trace(*arguments):
    return CliRunner().invoke(app, ["trace", "--no-color", "--no-html", *arguments])


def test_a_module_runs_as_python_m_runs_it(tmp_path, monkeypatch, capfd):
    """`__main__`, its package, sys.argv[0] its file, the current folder first on sys.path:
    what `python -m` gives the same module, word for word."""
    package(tmp_path, "trainer", {"where.py": "import sys\n" + WHERE})
    monkeypatch.chdir(tmp_path)
    by_python = subprocess.run([sys.executable, "-m", "trainer.where", "--lr", "x"], text=True,
                               capture_output=True, check=True).stdout
    monkeypatch.setattr(sys, "path", list(sys.path))
    outcome = run_module("trainer.where", ["--lr", "x"])
    del sys.modules["trainer"]  # imported, as python -m imports the parent package
    assert outcome.exit_code == 0 and not outcome.raised
    assert capfd.readouterr().out == by_python
    assert f"ran as __main__ trainer trainer.where ['{tmp_path}/trainer/where.py', '--lr', 'x']" \
        in by_python


def test_genesis_trace_m_runs_the_module_with_its_arguments_and_names_it(tmp_path, monkeypatch):
    package(tmp_path, "trainer", {"train.py": TRAINING})
    monkeypatch.chdir(tmp_path)
    # --steps before -m is genesis's; after the module's name it is the module's
    result = trace("--steps", "2", "--no-check", "-m", "trainer.train", "--steps", "5",
                   "--lr", "0.05")
    assert result.exit_code == 0, result.output
    assert "trained 5 steps at lr 0.05" in result.output
    assert "genesis trace -m trainer.train --steps 5 --lr 0.05" in result.output
    saved = json.loads((tmp_path / "genesis-trace" / "trainer.train" / "trace.json").read_text())
    assert saved["script"] == "-m trainer.train" and saved["args"] == ["--steps", "5", "--lr", "0.05"]
    assert saved["steps_seen"] == 5 and saved["steps_recorded"] == 2
    assert saved["meta"]["options"]["check"] is False


def test_a_package_runs_its_main_module(tmp_path, monkeypatch):
    package(tmp_path, "trainer", {"__main__.py": TRAINING})
    monkeypatch.chdir(tmp_path)
    result = trace("--json", "-m", "trainer", "--", "--steps", "2")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["script"] == "-m trainer" and summary["args"] == ["--steps", "2"]
    assert summary["steps_seen"] == 2


def test_a_pytorch_module_runs_with_torch(tmp_path, monkeypatch):
    package(tmp_path, "torchy", {"fit.py": TORCH_TRAINING})
    monkeypatch.chdir(tmp_path)
    result = trace("--torch", "-q", "--out", str(tmp_path / "out"), "-m", "torchy.fit")
    assert result.exit_code == 0, result.output
    assert "-m torchy.fit: no findings in 4 backward calls" in result.output
    saved = json.loads((tmp_path / "out" / "trace.json").read_text())
    assert saved["meta"]["options"]["torch"] is True and saved["steps_seen"] == 4


@pytest.mark.parametrize("module, said", [
    ("trainer.nope", "No module named trainer.nope"),
    ("nowhere", "No module named nowhere"),
    ("trainer", "'trainer' is a package and cannot be directly executed"),
])
def test_a_module_that_is_not_there_is_one_line_and_nothing_is_left(tmp_path, monkeypatch,
                                                                    module, said):
    package(tmp_path, "trainer", {"train.py": TRAINING})
    monkeypatch.chdir(tmp_path)
    result = trace("-m", module)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: can't run -m {module}: "), result.output
    assert said in lines[0] and "run genesis trace from the folder that holds it" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "genesis-trace").exists()  # the folder made for it is gone again


def test_a_package_that_raises_on_import_is_the_scripts_error_not_a_missing_module(
        tmp_path, monkeypatch):
    package(tmp_path, "broken", {"__init__.py": "import no_such_dependency\n",
                                 "train.py": TRAINING})
    monkeypatch.chdir(tmp_path)
    result = trace("-m", "broken.train")
    assert result.exit_code == 3, result.output
    assert "ModuleNotFoundError: No module named 'no_such_dependency'" in result.output
    assert "can't run -m" not in result.output


def test_neither_a_script_nor_a_module_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = trace("--steps", "2")
    assert result.exit_code == 2
    assert "give the script to run (genesis trace train.py) or a module" in result.output


def test_diff_tells_runs_of_different_module_commands(tmp_path, monkeypatch):
    package(tmp_path, "trainer", {"train.py": TRAINING})
    monkeypatch.chdir(tmp_path)
    for name, lr in (("a", "0.1"), ("b", "0.2")):
        result = trace("-q", "--no-check", "--out", name, "-m", "trainer.train", "--lr", lr)
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["diff", "--no-html", "a", "b"], env={"COLUMNS": "200"})
    assert ("The runs are of different commands: A ran -m trainer.train --lr 0.1, "
            "B ran -m trainer.train --lr 0.2.") in " ".join(result.output.split())


def test_run_module_raises_for_no_module_before_running_anything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = sys.argv[:]
    with pytest.raises(ScriptNotFound, match="No module named not_a_module_here"):
        run_module("not_a_module_here", ["x"])
    assert sys.argv == argv
