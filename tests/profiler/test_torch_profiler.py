"""torch.profiler and torch.autograd.profiler, served by genesis: imported as PyTorch
scripts import them, reported served by `genesis compat`, and a profiled PyTorch training
loop traced by `genesis trace --torch` with no findings."""
import json
from pathlib import Path

from typer.testing import CliRunner

import genesis
from genesis.compat import is_served, serve_torch
from genesis_cli.app import app

SCRIPT = Path(__file__).resolve().parents[1] / "cli" / "data" / "torch" / "profiled_training.py"


def test_the_profiler_modules_and_names_are_genesis_while_torch_is_served():
    with serve_torch():
        import torch
        import torch.autograd.profiler as autograd_profiler
        import torch.profiler
        from torch.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                    schedule, tensorboard_trace_handler)

        assert is_served(torch.profiler) and is_served(autograd_profiler)
        assert profile is genesis.profiler.profile and schedule is genesis.profiler.schedule
        assert record_function is genesis.profiler.record_function
        assert autograd_profiler.record_function is record_function
        assert autograd_profiler.profile is genesis.profiler.autograd_profiler.profile
        assert ProfilerActivity.CUDA is genesis.profiler.ProfilerActivity.CUDA
        assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"
        assert tensorboard_trace_handler is genesis.profiler.tensorboard_trace_handler
        assert torch.profiler.profile is profile  # reached as an attribute too
        with profile() as prof:
            torch.ones(2) * 2
        assert [row.key for row in prof.key_averages()] == ["genesis::mul"]


def test_genesis_compat_reports_the_profiler_names_served():
    result = CliRunner().invoke(app, ["compat", "--json", str(SCRIPT)])
    assert result.exit_code == 0, result.output
    names = {row["name"]: row["missing"] for row in json.loads(result.output)["names"]}
    for name in ("torch.profiler.profile", "torch.profiler.record_function",
                 "torch.profiler.ProfilerActivity", "torch.profiler.schedule",
                 "torch.profiler.tensorboard_trace_handler", "torch.autograd.profiler.profile"):
        assert names[name] is None, name


def test_a_profiled_pytorch_training_loop_is_traced_with_no_findings(tmp_path):
    out, log = tmp_path / "out", tmp_path / "log"
    result = CliRunner().invoke(app, ["trace", "--torch", "--no-html", "--no-color", "--out",
                                      str(out), str(SCRIPT), str(log)])
    assert result.exit_code == 0, result.output
    trace = json.loads((out / "trace.json").read_text())
    assert trace["findings"] == [] and trace["steps_seen"] == 6
    assert "Self CPU time total" in result.output and "train_step" in result.output
    assert "Optimizer.step#SGD.step" in result.output
    assert "no op ran on a CUDA GPU" in result.output  # CUDA asked for, none here: said
    (written,) = log.iterdir()  # one active cycle: one trace file
    assert written.name.endswith(".pt.trace.json")
    assert any(event["name"] == "ProfilerStep#3"
               for event in json.loads(written.read_text())["traceEvents"])
