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


def run_genesis(*arguments):
    return subprocess.run([sys.executable, "-m", "genesis_cli", *arguments],
                          capture_output=True, text=True, check=False)


def test_a_misspelt_option_is_named_with_the_closest_one_on_stderr(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('ran')\n")
    completed = run_genesis("trace", "--stpes", "3", str(script))
    assert completed.returncode == 2
    assert "unknown option --stpes; did you mean --steps?" in completed.stderr
    assert "ran" not in completed.stdout and completed.stdout == ""  # not taken as a script
    assert not (tmp_path / "genesis-trace").exists()


def test_options_after_the_script_go_to_the_script(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint('argv', sys.argv[1:])\n")
    result = CliRunner().invoke(app, ["trace", "--no-html", "--out", str(tmp_path / "out"),
                                      str(script), "--stpes", "3"])
    assert "argv ['--stpes', '3']" in result.output


def test_every_subcommand_names_unknown_options(tmp_path):
    for command, given, closest in (("gradcheck", "--shap", "--shape"),
                                    ("render", "--foucs", "--focus")):
        completed = run_genesis(command, given, "x", str(tmp_path / "t.json"))
        assert completed.returncode == 2, completed
        assert f"unknown option {given}; did you mean {closest}?" in completed.stderr
