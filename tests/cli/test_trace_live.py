"""The live line of `genesis trace`: in a terminal it shows the step, loss, time and findings
while a long run goes on, keeps the script's own output whole and leaves nothing behind; piped,
or with `--quiet`, nothing extra is printed."""
import os
import re
import select
import struct
import subprocess
import sys
import textwrap

import pytest

from genesis_cli.live_line import LatestRecord, line_text

pty = pytest.importorskip("pty")
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

SLOW_TRAINING = """\
import time

import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
x, y = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(40):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    time.sleep(0.06)
    if step % 10 == 9:
        print(f"epoch {step // 10} done, loss {loss.item():.4f}")
"""
LIVE = re.compile(r"genesis trace +(step [\d,]+|waiting for the first step)")
ROWS, COLUMNS = 24, 120


def command(tmp_path, *options) -> list:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SLOW_TRAINING))
    return [sys.executable, "-m", "genesis_cli", "trace", "--no-html", "--no-check",
            "--out", str(tmp_path / "out"), *options, str(script)]


def run_in_terminal(arguments: list, cwd) -> tuple:
    """Run `arguments` with a pseudo-terminal as standard input, output and error: (exit
    status, every byte written to the terminal)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS)}
    environment.pop("NO_COLOR", None)
    child = subprocess.Popen(arguments, stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                             env=environment)
    os.close(slave)
    written = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            child.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the run is over and every byte was read
            break
        if not data:
            break
        written += data
    os.close(master)
    return child.wait(), written.decode("utf-8", "replace")


def screen(written: str) -> list:
    """The lines a terminal shows after `written` (carriage returns, line feeds, erasing the
    line, moving up; colours and other sequences ignored)."""
    lines, row, column = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]", written):
        if token == "\r":
            column = 0
        elif token == "\n":
            row += 1
            if row == len(lines):
                lines.append("")
        elif token.startswith("\x1b["):
            if token.endswith("K"):
                lines[row] = "" if token == "\x1b[2K" else lines[row][:column]
            elif token.endswith("A"):
                row = max(row - int(token[2:-1] or 1), 0)
        else:
            line = lines[row].ljust(column)
            lines[row] = line[:column] + token + line[column + 1:]
            column += 1
    return [line.rstrip() for line in lines]


def test_the_live_line_shows_in_a_terminal_and_leaves_nothing_behind(tmp_path):
    status, written = run_in_terminal(command(tmp_path), tmp_path)
    assert status == 0, written
    uncoloured = re.sub(r"\x1b\[[0-9;]*m", "", written)
    drawn = [match.group(0) for match in LIVE.finditer(uncoloured)]
    assert any(" step " in line for line in drawn), written  # it showed the steps ...
    assert re.search(r"step [\d,]+ +loss \d\.\d+ +\d+s +0 findings", uncoloured)
    shown = screen(written)
    assert not [line for line in shown if LIVE.search(line)], shown  # ... and left no trace
    epochs = [line for line in shown if line.startswith("epoch")]
    assert [line.split(",")[0] for line in epochs] == [f"epoch {n} done" for n in range(4)]
    assert all(re.fullmatch(r"epoch \d done, loss \d\.\d{4}", line) for line in epochs), epochs
    report = shown.index(next(line for line in shown if line.startswith("genesis trace ")))
    assert report > shown.index(epochs[-1])  # the report comes after the script's output
    assert any("metrics.jsonl" in line for line in shown[report:])


def test_piped_output_gets_no_live_line(tmp_path):
    finished = subprocess.run(command(tmp_path), cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert not LIVE.search(finished.stdout + finished.stderr)
    assert "\x1b" not in finished.stdout + finished.stderr  # not a terminal: no escape codes
    assert finished.stdout.splitlines()[:4] == [
        line for line in finished.stdout.splitlines() if line.startswith("epoch")]


def test_quiet_gets_no_live_line(tmp_path):
    status, written = run_in_terminal(command(tmp_path, "--quiet"), tmp_path)
    assert status == 0, written
    assert not LIVE.search(re.sub(r"\x1b\[[0-9;]*m", "", written))
    shown = [line for line in screen(written) if line]
    assert len(shown) == 5 and shown[-1].startswith(f"{tmp_path / 'train.py'}: no findings")


def test_the_newest_whole_record_is_read_as_the_file_grows(tmp_path):
    path = tmp_path / "metrics.jsonl"
    latest = LatestRecord(path)
    assert latest.poll() is None  # not written yet
    with open(path, "w") as handle:
        handle.write('{"step": 0, "loss": "NaN", "findings": 1}\n{"step": 1, "lo')
        handle.flush()
        assert latest.poll()["step"] == 0  # the line being written waits
        handle.write('ss": 0.5, "findings": 1}\n')
        handle.flush()
        assert latest.poll() == {"step": 1, "loss": 0.5, "findings": 1}
    path.write_text('{"step": 0, "loss": 2.0, "findings": 0}\n')  # a new run writes it anew
    assert latest.poll()["loss"] == 2.0
    latest.close()


def test_the_line_names_a_nan_loss_and_counts_findings():
    text = line_text({"step": 7, "loss": "NaN", "findings": 1}, 65.0)
    assert text.plain == "genesis trace  step 7  loss NaN  1m 05s  1 finding"
