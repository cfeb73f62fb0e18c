"""`genesis gradcheck --device cuda`: inputs made on the GPU and the check run there, so a
Function with GPU code (here: a tensor made on "cuda" in its forward) is checked as it runs;
a device that cannot be had is a usage error naming it."""
import json
from pathlib import Path

from typer.testing import CliRunner

from genesis_cli.app import app

GPU_FUNCTIONS = Path(__file__).with_name("gpu_functions.py")


def run(*args):
    return CliRunner().invoke(app, ["gradcheck", *args, "--no-color"], env={"COLUMNS": "200"})


def test_functions_with_gpu_code_are_checked_on_the_gpu(fake_cuda):
    path = GPU_FUNCTIONS
    result = run(str(path), "--device", "cuda", "--json")
    assert result.exit_code == 1, result.output  # WrongSquare fails
    summary = json.loads(result.output)
    assert summary["device"] == "cuda:0"
    statuses = {row["name"].split(":")[-1]: row for row in summary["results"]}
    assert {name: row["status"] for name, row in statuses.items()} == {
        "Square": "PASS", "WrongSquare": "FAIL", "Given": "PASS"}
    assert "on cuda:0" in statuses["Square"]["checked"]
    assert "on cuda:0" in statuses["Given"]["checked"]  # its CPU inputs moved over
    on_the_cpu = run(f"{path}:Square")  # its forward mixes devices there
    assert on_the_cpu.exit_code == 1 and "same device" in on_the_cpu.output


def test_ops_are_checked_on_the_gpu(fake_cuda):
    result = run("--ops", "mul,softmax", "--device", "cuda")
    assert result.exit_code == 0, result.output
    assert "float64 on cuda:0" in result.output


def test_a_device_that_cannot_be_had_is_a_usage_error(fake_cuda):
    for device, words in (("gpu", "unknown device 'gpu'"), ("cuda:3", "1 fake GPU")):
        result = run("--ops", "mul", "--device", device)
        assert result.exit_code == 2 and f"bad --device {device!r}" in result.output
        assert words in result.output
