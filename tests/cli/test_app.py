"""The `genesis` command's basics."""
import subprocess
import sys

from typer.testing import CliRunner

import genesis
from genesis_cli.app import app


def test_version_flag():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"genesis {genesis.__version__}"


def test_help_runs_as_a_module():
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "--help"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0 and "gradient" in completed.stdout
