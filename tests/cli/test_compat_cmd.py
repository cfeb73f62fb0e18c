"""`genesis compat SCRIPT...`: the torch names scripts use, which genesis lacks, as a table
(or JSON); the exit status says whether anything is missing."""
import json
from pathlib import Path

from typer.testing import CliRunner

from genesis_cli.app import app

SCRIPTS = Path(__file__).parent / "data" / "torch"


def run(*args):
    return CliRunner().invoke(app, ["compat", "--no-color", *map(str, args)], env={"COLUMNS": "200"})


def test_a_script_genesis_serves_fully_exits_0_and_says_what_was_not_scanned():
    result = run(SCRIPTS / "classifier.py")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "torch.nn.functional.cross_entropy serves it" in said and "classifier.py:25" in said
    assert "genesis serves all 11 torch names used in 1 script" in said
    assert "Methods called on tensors are not scanned" in said


def test_missing_names_are_listed_with_where_and_exit_1():
    result = run(SCRIPTS / "classifier.py", SCRIPTS / "sparse_tensor.py",
                 SCRIPTS / "unsupported_module.py")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "torch.sparse_coo_tensor lacks torch.sparse_coo_tensor" in said and "sparse_tensor.py:4" in said
    assert "3 of 15 torch names used in 3 scripts are missing" in said
    listing = json.loads(run("--json", SCRIPTS / "unsupported_module.py").output)["names"]
    assert {"name": "torch.fx.symbolic_trace", "missing": "torch.fx",
            "used_at": str(SCRIPTS / "unsupported_module.py") + ":4", "uses": 1} in listing


def test_json_and_only_missing():
    result = run("--json", "--missing", SCRIPTS / "classifier.py", SCRIPTS / "sparse_tensor.py")
    assert result.exit_code == 1
    listing = json.loads(result.output)
    assert listing["missing"] == 1 and listing["used"] == 12
    assert listing["names"] == [{"name": "torch.sparse_coo_tensor", "missing": "torch.sparse_coo_tensor",
                                 "used_at": str(SCRIPTS / "sparse_tensor.py") + ":4", "uses": 1}]


def test_a_missing_or_broken_script_is_a_usage_error(tmp_path):
    result = run(tmp_path / "nowhere.py")
    assert result.exit_code == 2 and "script not found" in result.output
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nx = (\n")
    result = run(broken)
    assert result.exit_code == 2 and "broken.py:2: does not parse" in " ".join(result.output.split())


def test_a_script_without_torch_says_so(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("print('hello')\n")
    result = run(plain)
    assert result.exit_code == 0 and "No torch names found in 1 script" in result.output
