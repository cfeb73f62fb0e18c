"""`genesis trace` starts the script as soon as its command line is parsed: parsing it
imports nothing of genesis (the script's process has imported genesis already), and the
command behaves as the full application's. The script's process makes the report, so the
command imports genesis only when that process died first; the script's process imports no
Rich until the script is done; the command ends without tearing down its interpreter,
losing no output."""
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from genesis_cli.root import trace_app

GENESIS_LOADED = ("sorted(name for name in sys.modules if name == 'genesis' or "
                  "name.startswith(('genesis.', 'numpy', 'viz')))")


def test_parsing_a_trace_command_line_imports_nothing_of_genesis(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hello')\n")
    # Stop in the command at the point where the script's process gets its orders.
    probe = (
        "import sys\n"
        "import genesis_cli.supervise as supervise\n"
        "def stop(*args, **kwargs):\n"
        f"    print({GENESIS_LOADED})\n"
        "    raise SystemExit(0)\n"
        "supervise._child_running = stop\n"
        "from genesis_cli.root import trace_app\n"
        f"sys.argv = ['genesis', 'trace', '--no-html', '--out', {str(tmp_path / 'out')!r}, "
        f"{str(script)!r}]\n"
        "trace_app()()\n")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


@pytest.mark.parametrize("arguments", [["trace", "--help"], ["trace"],
                                       ["trace", "--stpes", "2", "x.py"],
                                       ["trace", "--format", "gif", "x.py"]])
def test_the_trace_application_answers_as_the_full_one(arguments):
    runner = CliRunner()
    alone, full = runner.invoke(trace_app(), arguments), runner.invoke(app, arguments)
    assert (alone.exit_code, alone.output) == (full.exit_code, full.output)


def test_genesis_version_still_answers():
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "--version"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0 and completed.stdout.startswith("genesis ")


def test_the_live_line_draws_without_importing_genesis():
    # It draws on a thread of its own while the main thread imports genesis: an import
    # there could deadlock with the main thread's (it did, under load, in CI).
    probe = ("import sys\n"
             "from genesis_cli.live_line import line_text\n"
             "for loss in (0.5, 'NaN', float('inf'), None):\n"
             "    line_text({'step': 3, 'loss': loss, 'findings': 0}, 2.0)\n"
             f"print({GENESIS_LOADED})\n")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


@pytest.mark.parametrize("ending, status", [("", 0), ("raise ValueError('bad')", 3),
                                            ("import sys; sys.exit(5)", 5)])
def test_genesis_trace_ends_without_teardown_and_loses_no_output(tmp_path, ending, status):
    # The command ends with os._exit once the run is reported (genesis_cli.entry.leave): its
    # report, written to a pipe (block-buffered), comes out whole, and the status is kept.
    script = tmp_path / "train.py"
    script.write_text("import genesis\n"
                      "weights = genesis.randn(3, requires_grad=True)\n"
                      "(weights * 2).sum().backward()\n"
                      "print('script done')\n" + ending + "\n")
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--no-html",
                                "--no-check", "--out", str(tmp_path / "out"), str(script)],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == status, completed.stderr
    assert "script done" in completed.stdout
    assert completed.stdout.rstrip().endswith("metrics.jsonl  (one JSON line per step)")


def test_leave_ends_as_sys_exit_would():
    probe = ("import sys\n"
             "from genesis_cli.entry import leave\n"
             "sys.stdout.write('kept in the buffer')\n"
             "leave(sys.argv[1] if sys.argv[1] != 'none' else None)\n")
    for code, status, stderr in (("none", 0, ""), ("a message", 1, "a message\n")):
        completed = subprocess.run([sys.executable, "-c", probe, code], capture_output=True,
                                   text=True, check=False)
        assert (completed.returncode, completed.stdout, completed.stderr) == \
            (status, "kept in the buffer", stderr)


def test_the_scripts_process_imports_no_rich():
    # It writes the outputs and hands its problems over to be printed; a bar while gradients
    # are checked imports Rich then, after the script.
    completed = subprocess.run([sys.executable, "-c", "import sys, genesis_cli.traced_run; "
                                "print(sorted(name for name in sys.modules if name == 'rich' "
                                "or name.startswith('rich.')))"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


@pytest.mark.parametrize("ending, imported", [("", False), ("import os; os._exit(0)", True)])
def test_the_command_imports_genesis_only_when_the_scripts_process_could_not_report(
        tmp_path, ending, imported):
    script = tmp_path / "train.py"
    script.write_text("import os\n"
                      "import genesis\n"
                      "weights = genesis.randn(3, requires_grad=True)\n"
                      "(weights * 2).sum().backward()\n"
                      "os.chdir(os.path.dirname(os.path.abspath(__file__)))\n" + ending + "\n")
    probe = ("import sys\n"
             "from genesis_cli import entry\n"
             "def leave(code):\n"  # what was imported by the time the command is done
             f"    print({GENESIS_LOADED}, file=sys.stderr)\n"
             "    sys.exit(code)\n"
             "entry.leave = leave\n"
             "sys.argv = ['genesis'] + sys.argv[1:]\n"
             "entry.main()\n")
    out = tmp_path / "out"
    completed = subprocess.run([sys.executable, "-c", probe, "trace", "--no-html", "--no-check",
                                "--out", str(out), str(script)],
                               capture_output=True, text=True, check=False, cwd=tmp_path.parent)
    assert completed.returncode == 0, completed.stderr
    loaded = completed.stderr.strip().splitlines()[-1]
    assert ("'genesis'" in loaded) == imported, loaded
    # file names are shown from the folder the command ran in, wherever the script went
    assert f"{tmp_path.name}/out/trace.json" in completed.stdout
