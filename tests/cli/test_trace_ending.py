"""The report `genesis trace` prints is made in the script's process, for genesis trace's
consoles, and printed as it was made only when it holds; otherwise genesis trace makes it
itself, as it does when that process dies. Either way the exit status and the text are what
the run's end calls for (genesis_cli.commands.trace_ending)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

TRAINING = """\
import genesis
from genesis import nn

genesis.manual_seed(0)

model = nn.Linear(3, 1)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = model(genesis.randn(8, 3)).pow(2).mean()
    loss.backward()
    optimizer.step()
print("trained")
"""


def trace(tmp_path, ending: str, *options: str, env: dict | None = None, **run) -> subprocess.CompletedProcess:
    script = tmp_path / "train.py"
    script.write_text(TRAINING + ending + "\n")
    return subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--no-html", "--no-check",
                           "--out", str(tmp_path / "out"), *options, str(script)],
                          capture_output=True, text=True, check=False, env=_environment(env), **run)


def _environment(changes: dict | None) -> dict:
    """This process's environment with `changes`; NO_COLOR left out where colours are asked for."""
    environment = {**os.environ, **(changes or {})}
    if "FORCE_COLOR" in (changes or {}):
        environment.pop("NO_COLOR", None)
    return environment


def test_a_negative_exit_status_is_the_scripts_not_a_signal(tmp_path):
    done = trace(tmp_path, "import sys; sys.exit(-1)", "--json")
    assert done.returncode == 255, done.stderr  # as python SCRIPT ends
    assert json.loads(done.stdout)["status"] == -1


def test_a_crash_after_the_report_was_made_is_in_the_exit_status(tmp_path):
    done = trace(tmp_path, "import atexit, os, signal\n"
                           "atexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))", "--json")
    assert done.returncode == 128 + 11, done.stderr
    assert json.loads(done.stdout)["status"] == 128 + 11


def test_json_with_the_output_closed_prints_no_report_when_the_script_died(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAINING + "import os; os._exit(0)\n")
    done = subprocess.run(["sh", "-c", 'exec "$0" -m genesis_cli trace --json --no-html '
                                       '--out "$1" "$2" >&-', sys.executable,
                           str(tmp_path / "out"), str(script)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert "trained" in done.stderr and "Parameters" not in done.stderr


def test_what_the_script_sets_in_its_environment_does_not_change_the_report(tmp_path):
    colours = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "100"}
    plain = trace(tmp_path, "", env=colours)
    changed = trace(tmp_path, "import os; os.environ['NO_COLOR'] = '1'; os.environ['TERM'] = 'dumb'",
                    env=colours)
    assert "\x1b[1;32mPASS" in plain.stdout  # coloured, as the terminal asked
    assert _untimed(changed.stdout) == _untimed(plain.stdout)


def _untimed(report: str) -> str:
    return re.sub(r"time: [0-9.]+ s", "time: T s", report)


def test_a_report_the_output_cannot_take_is_left_to_genesis_trace(tmp_path):
    # A name past ASCII on an ASCII-only stdout: genesis trace prints what it can, as before.
    script = tmp_path / "trainé.py"
    script.write_text(TRAINING)
    done = subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "-q", "--no-html",
                           "--out", str(tmp_path / "out"), str(script)], capture_output=True,
                          check=False, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 1
    assert b"PYTHONIOENCODING=utf-8" in done.stdout + done.stderr  # Rich's advice


def test_a_run_whose_record_died_with_its_process_says_so(tmp_path):
    # --out names a file: no journal can be kept, and the script's process ends with
    # os._exit after its backward calls: nothing of them reaches genesis trace.
    (tmp_path / "taken").write_text("a file, not a folder")
    script = tmp_path / "train.py"
    script.write_text(TRAINING + "import os; os._exit(0)\n")
    done = subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--out",
                           str(tmp_path / "taken"), str(script)], capture_output=True, text=True,
                          check=False, env=_environment({"COLUMNS": "200"}))
    assert done.returncode == 4
    assert "made no backward call" not in done.stdout
    assert "Nothing it captured reached genesis trace" in done.stdout
    assert "backward calls: unknown" in done.stdout
    assert "what the script's process captured was lost with it" in done.stdout
    summary = subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--json", "--out",
                              str(tmp_path / "taken"), str(script)], capture_output=True,
                             text=True, check=False)
    assert json.loads(summary.stdout)["record_lost"] is True


def test_json_keeps_stdout_to_itself_when_stderr_is_closed(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAINING)
    done = subprocess.run(["sh", "-c", 'exec "$0" -m genesis_cli trace --json --no-html '
                                       '--out "$1" "$2" 2>&-', sys.executable,
                           str(tmp_path / "out"), str(script)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert json.loads(done.stdout)["steps_seen"] == 3  # the script's "trained" went nowhere
