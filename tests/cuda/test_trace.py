"""The debugging toolkit on GPU scripts: `genesis trace` captures, checks and renders a
script that trains on "cuda" exactly as one on the CPU; statistics are taken on the device."""
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import genesis
from genesis.debug import grad_stats, value_stats
from genesis.debug.session import TraceSession
from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.cuda import gpu_functions
from tests.helpers import Cube

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "buggy" / "wrong_backward.py"
CALL_LINE = SCRIPT.read_text().splitlines().index(
    "        return self.out(SoftSign.apply(self.hidden(x)))") + 1


def test_genesis_trace_on_a_gpu_script(cuda, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out", str(out),
                                      str(SCRIPT), "--device", "cuda", "--steps", "3"])
    assert result.exit_code == 1, result.output
    trace = Trace.load(out / "trace.json")
    (finding,) = trace.findings
    assert finding.kind == "gradient_mismatch" and finding.function == "SoftSign"
    assert finding.source == f"{SCRIPT}:{CALL_LINE}"
    assert trace.steps_seen == 3 and {row.name for row in trace.parameters} == {
        "hidden.weight", "hidden.bias", "out.weight", "out.bias"}
    graph = trace.graphs[0]
    ops = [node for node in graph.nodes if node.kind == "op"]
    assert ops and {node.device for node in ops} == {"cuda:0"}
    softsign = next(node for node in ops if node.name.startswith("SoftSign"))
    figures = softsign.outputs[0]
    assert -1 < figures.stats["min"] < figures.stats["max"] < 1 and figures.grad["norm"] > 0
    assert ElementTree.parse(out / "graph.svg").getroot().tag.endswith("svg")
    assert "final loss" in result.output


def test_trace_session_finds_a_nan_born_on_the_device(cuda):
    weight = genesis.tensor([1.0, -1.0, 2.0], device=cuda, requires_grad=True)
    with TraceSession() as session:
        (weight - 1).log().sum().backward()          # log(0) and log(-2)
    trace = session.result(script="inline")
    kinds = [finding.kind for finding in trace.findings]
    assert kinds[0] == "nan_forward" and trace.findings[0].op == "LogBackward"
    log_node = next(node for node in trace.graphs[0].nodes if node.name == "LogBackward")
    assert log_node.outputs[0].stats["nan"] == 1 and log_node.outputs[0].stats["inf"] == 1


def test_per_node_check_of_a_correct_function_on_the_device_passes(cuda):
    x = genesis.randn(5, device=cuda, requires_grad=True)
    with TraceSession() as session:
        Cube.apply(x).sum().backward()
    trace = session.result(script="inline")
    assert trace.findings == []
    (check,) = session.check_results
    assert check["status"] == "pass"


CASES = {
    "float32": np.array([[1.5, -3.0], [0.0, 2.0]], np.float32),
    "nan and inf": np.array([1.0, np.nan, -np.inf, -2.0, np.inf]),
    "all nan": np.array([np.nan, np.nan]),
    "float16": np.array([0.5, -0.25, 65504.0], np.float16),
    "int64": np.array([3, -7, 0]),
    "bool": np.array([True, False, True]),
    "empty": np.zeros((0, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_statistics_on_the_device_equal_the_hosts(cuda, name):
    host = CASES[name]
    on_device = genesis.tensor(host, dtype=genesis.dtypes.from_numpy_dtype(host.dtype),
                               device=cuda)._data
    for function in (value_stats, grad_stats):
        ours, reference = function(on_device), function(host)
        assert ours.keys() == reference.keys()
        for key, value in reference.items():
            expected = value if value is None else pytest.approx(value, rel=1e-12)
            assert ours[key] == expected, (function.__name__, key)


@pytest.mark.parametrize("function, status", [(gpu_functions.Square, "pass"),
                                              (gpu_functions.WrongSquare, "fail")])
def test_a_function_bound_to_the_gpu_is_checked_there(cuda, function, status):
    """Re-run on the host it would mix devices; the check runs again where the call ran,
    and its verdict is the Function's, not the host's error."""
    x = genesis.randn(3, 2, device=cuda, requires_grad=True)
    with TraceSession() as session:
        function.apply(x).sum().backward()
    session.result(script="inline")
    (check,) = session.check_results
    assert check["status"] == status, check
