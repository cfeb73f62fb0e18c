"""A traced run stopped by SIGTERM (a job scheduler's stop, `kill PID`) keeps what it captured:
the script's process writes down its history before it ends by the signal, so report.html
has its Training view, metrics.jsonl every step, and the report and trace.json say the
script was killed. After SIGKILL, which leaves no time to write, the Training view is
rebuilt from the metrics.jsonl lines written before it, and the trace says so."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.viz.html.test_page import script_blocks

ROOT = Path(__file__).resolve().parents[2]

TRAINING = """\
import os
import signal
import time

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
x, y = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(STEPS):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    AFTER_STEP
"""
PARAMETERS = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


def write_script(tmp_path: Path, steps: int, after_step: str) -> Path:
    script = tmp_path / "train.py"
    script.write_text(TRAINING.replace("STEPS", str(steps)).replace(
        "AFTER_STEP", textwrap.indent(textwrap.dedent(after_step), "    ").strip()))
    return script


def killing_itself(tmp_path: Path, number: int, at_step: int, steps: int):
    """`genesis trace` (its report, in words, and the output folder) of a training script that
    sends itself signal `number` after step `at_step` of `steps`."""
    script = write_script(tmp_path, steps, f"""
        if step == {at_step}:
            os.kill(os.getpid(), {number})
    """)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-color", "--no-check", "--out", str(out),
                                      str(script)])
    assert result.exit_code == 128 + number, result.output
    return " ".join(result.output.split()), out


def traced_to_its_end(tmp_path: Path, script: Path) -> tuple:
    """(output, saved trace) of `genesis trace` of `script`, which must end as a finished run
    with exit status 0."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-color", "--no-check", "--no-html",
                                      "--out", str(out), str(script)])
    assert result.exit_code == 0, result.output
    saved = Trace.load(out / "trace.json")
    assert saved.exit_code == 0 and "finished" not in saved.meta
    return result.output, saved


def killed_by_sigterm_after(out: Path, steps: int) -> Trace:
    """What the outputs of a run killed by SIGTERM after `steps` steps must hold: trace.json
    saying so, with every step's history; report.html with the Training view's data and the
    same words; metrics.jsonl a line per step."""
    saved = Trace.load(out / "trace.json")
    assert saved.exit_code == -signal.SIGTERM and saved.meta["finished"] is False
    assert saved.meta["ended"] == "was killed by SIGTERM (signal 15)"
    assert saved.steps_seen == steps
    history = saved.meta["history"]
    assert history["loss"]["steps"] == list(range(steps))
    assert set(history["parameters"]) == PARAMETERS
    assert all(entry["grad_norm"]["steps"] == list(range(steps))
               for entry in history["parameters"].values())
    assert history["optimizers"][0]["name"].startswith("Adam")
    assert saved.meta["losses"]["steps"] == list(range(steps))  # what genesis diff compares
    page = script_blocks((out / "report.html").read_text(encoding="utf-8"))["genesis-data"]
    assert page["run"]["meta"]["history"]["loss"]["steps"] == list(range(steps))
    assert page["run"]["meta"]["ended"] == "was killed by SIGTERM (signal 15)"
    assert page["run"]["exit_code"] == -signal.SIGTERM
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [record["step"] for record in records] == list(range(steps))
    return saved


def test_a_script_that_gets_sigterm_keeps_its_training_history(tmp_path):
    said, out = killing_itself(tmp_path, signal.SIGTERM, at_step=29, steps=40)
    assert "script: was killed by SIGTERM (signal 15)" in said
    assert "The run did not finish: the script was killed by SIGTERM" in said
    killed_by_sigterm_after(out, 30)


def test_sigterm_sent_to_genesis_trace_stops_the_script_and_keeps_its_history(tmp_path):
    """`kill PID` of genesis trace: it passes the signal on, the script's process writes its
    history down and ends by it, and genesis trace writes the outputs and exits 143."""
    marker = tmp_path / "twelve-steps-done"
    script = write_script(tmp_path, 10_000, f"""
        if step == 11:
            open({str(marker)!r}, "w").close()
            time.sleep(60)  # killed here
    """)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "genesis_cli", "trace", "--no-check", "--out", str(out), str(script)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "the traced script never got going"
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, errors
    assert "was killed by SIGTERM (signal 15)" in " ".join(output.split())
    killed_by_sigterm_after(out, 12)


def test_a_script_with_its_own_sigterm_handler_keeps_it(tmp_path):
    """A script that stops cleanly on SIGTERM (saving a checkpoint, say) still does: genesis
    trace's own handler gives way to it, and the run ends as a finished one."""
    script = write_script(tmp_path, 40, """
        if step == 0:
            stopping = []
            signal.signal(signal.SIGTERM, lambda number, frame: stopping.append(number))
        if step == 9:
            os.kill(os.getpid(), signal.SIGTERM)
        if stopping:
            print("stopping cleanly after step", step)
            break
    """)
    output, saved = traced_to_its_end(tmp_path, script)
    assert "stopping cleanly after step 9" in output and saved.steps_seen == 10


def test_after_sigkill_the_training_view_is_rebuilt_from_metrics_jsonl(tmp_path):
    """SIGKILL gives the script's process no time to write its history: genesis trace rebuilds
    it from the lines metrics.jsonl got (the steps whose records were sent before the kill),
    and the trace says so and what that leaves out."""
    said, out = killing_itself(tmp_path, signal.SIGKILL, at_step=299, steps=400)
    assert "was killed by SIGKILL" in said
    written = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert written == list(range(len(written))) and len(written) >= 128  # sent 64 at a time at most
    saved = Trace.load(out / "trace.json")
    assert saved.exit_code == -signal.SIGKILL and saved.meta["finished"] is False
    assert saved.meta["history_from"].startswith("metrics.jsonl: the script's process was killed")
    history = saved.meta["history"]
    assert history["loss"]["steps"][-1] == written[-1] and history["steps_seen"] == len(written)
    assert saved.steps_seen == len(written)  # the journal may be older than the last lines
    assert f"backward calls: at least {len(written)} " in said
    assert set(history["parameters"]) == PARAMETERS
    assert history["optimizers"][0]["name"] == "Adam"
    page = script_blocks((out / "report.html").read_text(encoding="utf-8"))["genesis-data"]
    assert page["run"]["meta"]["history"]["loss"] == history["loss"]
    assert page["run"]["meta"]["history_from"] == saved.meta["history_from"]
    assert page["run"]["meta"]["ended"].startswith("was killed by SIGKILL (signal 9")
    assert page["run"]["steps_seen"] == len(written)  # "1 recorded of N" as in the Training view


def test_a_forked_worker_stopped_by_sigterm_ends_at_once_and_leaves_the_run_alone(tmp_path):
    """A process the script forks (as a DataLoader's or a Pool's workers are) inherits the
    SIGTERM handler: there it writes nothing and ends by the signal at once, as a worker
    that a pool terminates must; the traced run goes on and finishes."""
    script = write_script(tmp_path, 20, """
        if step == 5:
            worker = os.fork()
            if worker == 0:
                time.sleep(60)  # terminated here
                os._exit(0)
            started = time.monotonic()
            os.kill(worker, signal.SIGTERM)
            _, status = os.waitpid(worker, 0)
            print("worker ended by signal", os.WTERMSIG(status), "in under 5 s:",
                  time.monotonic() - started < 5)
    """)
    output, saved = traced_to_its_end(tmp_path, script)
    assert "worker ended by signal 15 in under 5 s: True" in output and saved.steps_seen == 20


@pytest.mark.parametrize("to_the_group", [False, True], ids=["alone", "its-process-group"])
def test_sigint_without_a_terminal_interrupts_the_script_once(tmp_path, to_the_group):
    """`timeout -s INT`, an IDE's stop button: SIGINT reaches genesis trace alone (no terminal
    sent it), which passes it on; sent to the whole process group, it reaches the script's
    process twice, and interrupts it once. Either way the script stops on one
    KeyboardInterrupt as under python, the report says so, the files are written and genesis
    trace ends by SIGINT."""
    marker = tmp_path / "five-steps-done"
    script = write_script(tmp_path, 10_000, f"""
        if step == 4:
            open({str(marker)!r}, "w").close()
        time.sleep(0.01)
    """)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "genesis_cli", "trace", "--no-color", "--no-check", "--out", str(out),
         str(script)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)  # no controlling terminal: a SIGINT can only come from kill
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "the traced script never got going"
        if to_the_group:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGINT)
        output, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGINT, errors
    assert errors.count("KeyboardInterrupt") == 1 and "genesis_cli" not in errors, errors
    assert "script: interrupted (Ctrl-C or SIGINT: KeyboardInterrupt)" in " ".join(output.split())
    saved = Trace.load(out / "trace.json")
    assert saved.exit_code == -signal.SIGINT and saved.steps_seen >= 5
    assert (out / "report.html").exists()
