"""`genesis trace` writes each step's figures as it goes: OUT/metrics.jsonl (one line of strict
JSON per step, kept by a run that dies) and, with `--tensorboard DIR`, TensorBoard event files
that read back with the right tags and steps; without tensorboardX it stops before the
script runs and names the extra to install."""
import glob
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from genesis.debug.sampling import sampled
from genesis_cli.app import app
from genesis_cli.metrics_sinks import JsonLinesSink, TensorBoardSink, scalars

TRAINING = """\
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
data = DataLoader(TensorDataset(genesis.randn(96, 4), genesis.randn(96, 1)), batch_size=8)
for epoch in range(2):
    for step, (x, y) in enumerate(data):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
"""
STEPS = 24  # 2 epochs of 12 batches


def write_script(tmp_path: Path, text: str = TRAINING) -> Path:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(text))
    return script


def trace(script: Path, out: Path, *options):
    return CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--no-check",
                                    "--out", str(out), *map(str, options), str(script)])


def _refuse(constant: str):
    raise AssertionError(f"metrics.jsonl holds the bare constant {constant}: not strict JSON")


def read_lines(path: Path) -> list:
    text = path.read_text()
    assert text.endswith("\n")  # every line is whole
    return [json.loads(line, parse_constant=_refuse) for line in text.splitlines()]


def test_each_step_is_one_line_of_strict_json_listed_with_the_outputs(tmp_path):
    out = tmp_path / "out"
    result = trace(write_script(tmp_path), out, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["files"]["metrics"] == str(out / "metrics.jsonl")
    records = read_lines(out / "metrics.jsonl")
    assert [record["step"] for record in records] == list(range(STEPS))
    first = records[0]
    assert set(first["grad_norm"]) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    assert first["lr"] == {"SGD[0]": 0.05}
    assert isinstance(first["loss"], float) and first["findings"] == 0
    assert all(record["elapsed_s"] >= 0 for record in records)
    measured = [record["step"] for record in records if record.get("update_ratio")]
    assert measured and all(sampled(step) for step in measured)


def test_the_console_report_lists_metrics_jsonl(tmp_path):
    result = trace(write_script(tmp_path), tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "metrics.jsonl  (one JSON line per step)" in result.output


def test_a_nan_loss_is_written_as_the_string_nan(tmp_path):
    script = write_script(tmp_path, TRAINING.replace(
        "loss = F.mse_loss(model(x), y)",
        "loss = F.mse_loss(model(x), y) * (float('nan') if epoch == 1 and step == 5 else 1.0)"))
    out = tmp_path / "out"
    trace(script, out)
    records = read_lines(out / "metrics.jsonl")
    assert records[17]["loss"] == "NaN"
    assert records[16]["loss"] != "NaN"


def test_a_script_that_raises_mid_run_keeps_the_lines_it_wrote(tmp_path):
    script = write_script(tmp_path, TRAINING.replace(
        "        optimizer.step()\n",
        "        optimizer.step()\n"
        "        if epoch == 0 and step == 6:\n"
        "            raise RuntimeError('out of data')\n"))
    out = tmp_path / "out"
    result = trace(script, out)
    assert result.exit_code == 3, result.output
    records = read_lines(out / "metrics.jsonl")
    assert [record["step"] for record in records] == list(range(7))


def test_no_metrics_writes_none_and_clears_an_earlier_runs(tmp_path):
    out = tmp_path / "out"
    script = write_script(tmp_path)
    assert trace(script, out).exit_code == 0
    assert (out / "metrics.jsonl").is_file()
    result = trace(script, out, "--no-metrics", "--json")
    assert result.exit_code == 0, result.output
    assert not (out / "metrics.jsonl").exists()
    assert "metrics" not in json.loads(result.stdout)["files"]


def read_events(folder: Path) -> dict:
    """{(tag, "scalar" | "histogram"): [steps]} of the TensorBoard event files in `folder`,
    read with TensorBoard's EventAccumulator when it is installed, else record by record
    (TFRecord framing) with tensorboardX's protobuf classes."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        EventAccumulator = None
    if EventAccumulator is not None:
        events = EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0})
        events.Reload()
        found = {(tag, "scalar"): [event.step for event in events.Scalars(tag)]
                 for tag in events.Tags()["scalars"]}
        found.update({(tag, "histogram"): [event.step for event in events.Histograms(tag)]
                      for tag in events.Tags()["histograms"]})
        return found
    from tensorboardX.proto.event_pb2 import Event

    found = {}
    for path in sorted(glob.glob(str(folder / "events.out.tfevents.*"))):
        data = Path(path).read_bytes()
        position = 0
        while position < len(data):
            (length,) = struct.unpack("<Q", data[position:position + 8])
            event = Event.FromString(data[position + 12:position + 12 + length])
            position += 12 + length + 4  # length, its CRC, the record, its CRC
            for value in event.summary.value:
                kind = "histogram" if value.HasField("histo") else "scalar"
                found.setdefault((value.tag, kind), []).append(event.step)
    return found


def test_tensorboard_writes_scalars_and_histograms_that_read_back(tmp_path):
    board = tmp_path / "board"
    result = trace(write_script(tmp_path), tmp_path / "out", "--tensorboard", board)
    assert result.exit_code == 0, result.output
    assert "(TensorBoard event files)" in result.output
    events = read_events(board)
    every_step = list(range(STEPS))
    sampled_steps = [step for step in every_step if sampled(step)]
    assert events[("loss", "scalar")] == every_step
    assert events[("grad_norm/fc1.weight", "scalar")] == every_step
    assert events[("lr/SGD/group0", "scalar")] == every_step
    assert events[("update_ratio/fc2.weight", "scalar")] == sampled_steps
    assert events[("weight/fc1.weight", "histogram")] == sampled_steps
    assert events[("grad/fc2.bias", "histogram")] == sampled_steps
    assert any(tag.startswith("activation/") and tag.endswith("/zeros") for tag, _ in events)


def test_without_tensorboardx_it_names_the_extra_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # as `import tensorboardX` fails
    ran = tmp_path / "ran"
    script = write_script(tmp_path, f"open({str(ran)!r}, 'w').close()\n" + TRAINING)
    result = trace(script, tmp_path / "out", "--tensorboard", tmp_path / "board")
    assert result.exit_code == 2
    assert "pip install 'genesis-autograd[tensorboard]'" in " ".join(result.output.split())
    assert not ran.exists() and not (tmp_path / "board").exists()


def test_a_tensorboardx_that_fails_to_import_is_named_and_runs_nothing(tmp_path, monkeypatch):
    """Installed but broken (a protobuf it can't use): the import's own error, not "not
    installed", and a usage error before the script runs, not a traceback from the child."""
    broken = tmp_path / "site" / "tensorboardX"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise TypeError("Descriptors cannot be created directly")')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(broken.parent),
                                                      os.environ.get("PYTHONPATH", "")]))
    ran = tmp_path / "ran"
    script = write_script(tmp_path, f"open({str(ran)!r}, 'w').close()\n" + TRAINING)
    result = trace(script, tmp_path / "out", "--tensorboard", tmp_path / "board")
    output = " ".join(result.output.split())
    assert result.exit_code == 2, output
    assert "installed but failed to import (TypeError: Descriptors cannot be created directly)" \
        in output
    assert "Traceback" not in output and "not installed" not in output
    assert not ran.exists() and not (tmp_path / "out").exists()  # nor the folder made for it


def test_sinks_take_the_records_as_the_session_sends_them(tmp_path):
    records = [{"step": 0, "loss": 1.0, "grad_norm": {"w": 2.0, "frozen": None},
                "update_ratio": {"w": 1e-3}, "lr": {"Adam[0]": 0.01, "Adam[1]": 0.0},
                "activations": {"act": {"mean": 0.1, "std": 1.0, "zeros": 0.5, "dead": 0.25,
                                        "saturated": None}},
                "findings": 0, "elapsed_s": 0.1},
               {"step": 1, "loss": float("inf"), "grad_norm": {"w": float("nan")}, "lr": {},
                "findings": 1, "elapsed_s": 0.2}]
    sink = JsonLinesSink(tmp_path / "metrics.jsonl")
    for record in records:
        sink.step_finished(record)
    sink.close()
    written = read_lines(tmp_path / "metrics.jsonl")
    assert written[1]["loss"] == "Infinity" and written[1]["grad_norm"] == {"w": "NaN"}
    assert [tag for tag, _ in scalars(records[0])] == [
        "loss", "grad_norm/w", "update_ratio/w", "lr/Adam/group0", "lr/Adam/group1",
        "activation/act/mean", "activation/act/std", "activation/act/zeros", "activation/act/dead"]

    board = TensorBoardSink(tmp_path / "board")  # not told of backward calls: scalars only
    for record in records:
        board.step_finished(record)
    board.close()
    events = read_events(tmp_path / "board")
    assert events[("loss", "scalar")] == [0, 1]
    assert events[("activation/act/dead", "scalar")] == [0]


def test_a_tensorboard_folder_that_is_a_file_is_a_usage_error(tmp_path):
    board = tmp_path / "board"
    board.write_text("not a folder")
    result = trace(write_script(tmp_path), tmp_path / "out", "--tensorboard", board)
    assert result.exit_code == 2
    assert "it is a file, not a folder" in result.output


def test_a_script_that_ends_with_os_exit_keeps_its_lines_and_events(tmp_path):
    script = write_script(tmp_path, "import os\n" + TRAINING + "os._exit(0)\n")
    out, board = tmp_path / "out", tmp_path / "board"
    trace(script, out, "--tensorboard", board)
    steps = [record["step"] for record in read_lines(out / "metrics.jsonl")]
    assert steps == list(range(STEPS))  # the last step's too: os._exit sends it before it ends
    assert read_events(board)[("loss", "scalar")] == steps


def test_dataloader_workers_write_no_lines_of_their_own(tmp_path):
    script = write_script(tmp_path, TRAINING.replace("batch_size=8)", "batch_size=8, num_workers=2)"))
    out = tmp_path / "out"
    result = trace(script, out)
    assert result.exit_code == 0, result.output
    assert [record["step"] for record in read_lines(out / "metrics.jsonl")] == list(range(STEPS))


def test_a_disk_that_fills_during_the_run_leaves_whole_lines_and_says_so(tmp_path):
    """RLIMIT_FSIZE makes writes past a size fail as a full disk would (EFBIG), the line that
    crosses it taken only in part: that part is cut off again, and the report says where the
    file stops instead of listing it as every step's."""
    script = write_script(tmp_path, TRAINING.replace("range(2)", "range(8)"))
    out = tmp_path / "out"

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8000, 8000))

    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-m", "genesis_cli", "trace", "--no-color", "--no-html", "--no-check",
         "--out", str(out), str(script)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])},
        capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    lines = read_lines(out / "metrics.jsonl")  # whole lines only, each strict JSON
    assert 0 < len(lines) < 8 * 12
    said = " ".join(completed.stderr.split())
    assert f"metrics.jsonl past step {lines[-1]['step']}: File too large; it holds the " \
           f"{len(lines)} whole lines written before" in said, completed.stderr
    assert "Nothing was written" not in completed.stdout
