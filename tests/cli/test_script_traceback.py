"""The traceback `genesis trace` shows for a script that raised: what `python SCRIPT` prints,
without runpy's, importlib's and genesis's own frames, on stderr."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from genesis_cli.runner import run_script

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
INTERNALS = ("runpy", "importlib", "genesis_cli", "runner.py", "traced_run",
             "frame(s) inside genesis")

SYNTAX_ERROR_HELPER = "a = 1\n\nx = (\n"
RAISING_HELPER = 'def load():\n    raise ValueError("bad config")\n\n\nload()\n'


def write_project(folder: Path, helper: str) -> Path:
    """main.py, which imports helper_mod.py (`helper`'s text) on its second line."""
    (folder / "helper_mod.py").write_text(helper)
    main = folder / "main.py"
    main.write_text("import sys\nimport helper_mod\n")
    return main


def python_traceback(script: Path) -> str:
    """What plain `python SCRIPT` prints on stderr."""
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                               cwd=script.parent, check=False)
    assert completed.returncode == 1
    return completed.stderr


def genesis_trace(script: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--no-html", "--out",
                           str(out), str(script)], capture_output=True, text=True,
                          cwd=script.parent, env=ENV, check=False)


def test_a_syntax_error_in_an_imported_module_shows_the_import_that_led_there(tmp_path):
    main = write_project(tmp_path, SYNTAX_ERROR_HELPER)
    shown = run_script(str(main)).traceback_text
    lines = shown.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f'  File "{main}", line 2, in <module>'
    assert lines[2] == "    import helper_mod"
    assert lines[3] == f'  File "{tmp_path / "helper_mod.py"}", line 3'
    assert lines[-1] == "SyntaxError: '(' was never closed"
    for internal in INTERNALS:
        assert internal not in shown
    assert shown == python_traceback(main)


def test_an_error_raised_while_importing_a_module_shows_every_user_frame(tmp_path):
    main = write_project(tmp_path, RAISING_HELPER)
    shown = run_script(str(main)).traceback_text
    helper = tmp_path / "helper_mod.py"
    assert shown.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{main}", line 2, in <module>',
        "    import helper_mod",
        f'  File "{helper}", line 5, in <module>',
        "    load()",
        f'  File "{helper}", line 2, in load',
        '    raise ValueError("bad config")',
        "ValueError: bad config"]
    assert shown == python_traceback(main)


def test_a_syntax_error_in_the_script_itself_shows_only_the_error(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import sys\nx = (1,\n")
    shown = run_script(str(script)).traceback_text
    assert shown.splitlines()[0] == f'  File "{script}", line 2'
    assert "Traceback" not in shown
    assert shown == python_traceback(script)


def test_chained_exceptions_are_shown_as_python_shows_them(tmp_path):
    script = tmp_path / "chained.py"
    script.write_text("try:\n    {}['key']\nexcept KeyError as error:\n"
                      "    raise ValueError('no key') from error\n")
    shown = run_script(str(script)).traceback_text
    assert "The above exception was the direct cause of the following exception:" in shown
    assert shown.count("Traceback (most recent call last):") == 2
    assert shown == python_traceback(script)


def test_frames_inside_genesis_are_folded_into_one_line(tmp_path):
    script = tmp_path / "reshape.py"
    script.write_text("import genesis\ngenesis.tensor([1.0, 2.0]).reshape(5)\n")
    lines = run_script(str(script)).traceback_text.splitlines()
    assert lines[:3] == ["Traceback (most recent call last):",
                         f'  File "{script}", line 2, in <module>',
                         "    genesis.tensor([1.0, 2.0]).reshape(5)"]
    assert lines[3].endswith("frame(s) inside genesis]")
    assert lines[-1].startswith("RuntimeError: reshape")


@pytest.mark.parametrize("helper, last_line", [
    (SYNTAX_ERROR_HELPER, "SyntaxError: '(' was never closed"),
    (RAISING_HELPER, "ValueError: bad config")])
def test_the_traceback_is_printed_on_stderr_and_the_report_on_stdout(tmp_path, helper, last_line):
    main = write_project(tmp_path, helper)
    completed = genesis_trace(main, tmp_path / "out")
    assert completed.returncode == 3, completed.stderr
    assert python_traceback(main) in completed.stderr
    assert completed.stderr.rstrip().endswith(last_line)
    for text in ("Traceback", "helper_mod", last_line):
        assert text not in completed.stdout
    assert "genesis trace" in completed.stdout and "raised an exception" in completed.stdout
