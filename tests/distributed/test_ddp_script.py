"""A PyTorch DDP training script with the usual boilerplate (setup from torchrun's
environment, a DistributedSampler with set_epoch, the DDP wrap, an all_reduce of the loss
for logging, a rank-0 checkpoint of model.module, destroy_process_group) runs unchanged
under `genesis trace --torch` as one process, with no findings; launched for two processes
it stops at init_process_group with the error that says why."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from tests.helpers import line_of

SCRIPT = Path(__file__).parent / "data" / "ddp_training.py"


def traced(tmp_path) -> tuple:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--torch", "--out",
                                      str(out), str(SCRIPT)])
    return result, json.loads((out / "trace.json").read_text())


@pytest.fixture
def torchrun(monkeypatch, tmp_path):
    """The environment `torchrun --nproc_per_node=1` gives the script."""
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                        ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500"),
                        ("CHECKPOINT", str(tmp_path / "checkpoint.pt"))):
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_the_ddp_script_runs_as_one_process_with_no_findings(tmp_path, torchrun):
    result, trace = traced(tmp_path)
    assert result.exit_code == 0, result.output
    assert trace["findings"] == [], [finding["title"] for finding in trace["findings"]]
    assert trace["steps_seen"] == 8  # 2 epochs of 64 samples in batches of 16, all on rank 0
    status = {row["name"]: row["status"] for row in trace["parameters"]}
    assert status == {name: "ok" for name in ("module.fc1.weight", "module.fc1.bias",
                                              "module.fc2.weight", "module.fc2.bias")}
    assert "epoch 0 loss" in result.output and "epoch 1 loss" in result.output
    import genesis
    saved = genesis.load(tmp_path / "checkpoint.pt")
    assert sorted(saved) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]


def test_the_ddp_script_launched_for_two_processes_says_genesis_runs_one(tmp_path, torchrun):
    torchrun.setenv("WORLD_SIZE", "2")
    result, trace = traced(tmp_path)
    assert result.exit_code == 3
    said = " ".join(result.output.split())
    assert ("OneProcessOnly: init_process_group was asked for world_size=2, rank=0 (from the "
            "argument rank and the argument world_size): genesis runs one process") in said
    assert "`torchrun --nproc_per_node=1` (WORLD_SIZE=1, RANK=0)" in said
    line = line_of(SCRIPT, "dist.init_process_group(")
    assert f"ddp_training.py\", line {line}, in setup" in said  # the script's line
    assert "the script raised before its first backward call" in said
    assert trace["steps_seen"] == 0 and "OneProcessOnly" in trace["script_error"]
