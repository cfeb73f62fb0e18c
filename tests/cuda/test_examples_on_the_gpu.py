"""The training examples take `--device cuda` and print on the GPU what they print on the
CPU (the fake GPU is NumPy underneath, so the numbers are the same to the last digit; on a
real GPU they agree to float32 rounding); `genesis trace` runs them there too."""
import re

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.test_examples import EXAMPLES, run_example

RUNS = {"mlp.py": ("--epochs", "20"), "cnn.py": ("--epochs", "1"),
        "transformer.py": ("--steps", "10"), "rnn_cell.py": ("--steps", "10")}


@pytest.mark.parametrize("name", RUNS)
def test_an_example_trains_on_the_gpu_as_on_the_cpu(fake_cuda, name, monkeypatch, capsys):
    on_cpu = run_example(name, monkeypatch, capsys, *RUNS[name])
    on_gpu = run_example(name, monkeypatch, capsys, *RUNS[name], "--device", "cuda")
    assert on_gpu == on_cpu and re.search(r"loss\s+[\d.]+", on_gpu)


def test_genesis_trace_of_an_example_on_the_gpu(fake_cuda, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out", str(out),
                                      str(EXAMPLES / "mlp.py"), "--epochs", "3",
                                      "--device", "cuda"])
    assert result.exit_code == 0, result.output
    assert "graphs: 1 (6 ops on cuda:0)" in result.output
    trace = Trace.load(out / "trace.json")
    assert trace.findings == [] and trace.steps_seen == 3
    ops = [node for node in trace.graphs[0].nodes if node.kind == "op"]
    assert ops and {node.device for node in ops} == {"cuda:0"}
