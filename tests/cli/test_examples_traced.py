"""Every example in examples/ (not buggy/) traces with --check-all to zero findings and a
strict-JSON trace.json; every buggy example is found (its op and line: tests/cli/test_trace_cmd.py)."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLEAN = sorted(path.name for path in EXAMPLES.glob("*.py"))
# Shorter runs than the defaults where a default run takes more than a few seconds traced;
# the code traced is the same.
SHORTER = {"transformer.py": ["--steps", "120"], "mlp.py": ["--epochs", "150"]}


def strict_json(path: Path) -> dict:
    def refuse(literal):
        raise ValueError(f"{path} holds the non-JSON literal {literal}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_every_example_is_covered():
    assert CLEAN == ["clean_kinks.py", "cnn.py", "custom_function.py", "mlp.py", "quickstart.py",
                     "rnn_cell.py", "transformer.py"]


@pytest.mark.parametrize("name", CLEAN)
def test_example_traces_clean_with_check_all(tmp_path, name):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--check-all", "--no-color", "--out", str(out),
                                      str(EXAMPLES / name), *SHORTER.get(name, [])])
    assert result.exit_code == 0, result.output
    assert "No findings in" in result.output
    strict_json(out / "trace.json")
    trace = Trace.load(out / "trace.json")
    assert trace.findings == [] and trace.steps_seen > 0 and trace.graphs
    assert all(check["status"] in ("pass", "skipped") for check in trace.meta["checks"])
    assert (out / "graph.svg").is_file() and (out / "report.html").is_file()
