"""Running scripts in-process like `python SCRIPT ARGS`."""
import sys

import pytest

from genesis_cli.runner import ScriptNotFound, run_script


def write(tmp_path, text, name="script.py"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_runs_as_main_with_argv_and_path(tmp_path, capsys):
    (tmp_path / "helper_module_for_runner.py").write_text("VALUE = 42\n")
    script = write(tmp_path, (
        "import sys, helper_module_for_runner\n"
        "if __name__ == '__main__':\n"
        "    print(sys.argv[1:], helper_module_for_runner.VALUE)\n"))
    argv_before = sys.argv[:]
    outcome = run_script(script, ["--epochs", "2"])
    assert outcome.exit_code == 0 and not outcome.raised and not outcome.exited
    assert capsys.readouterr().out == "['--epochs', '2'] 42\n"
    assert sys.argv == argv_before


@pytest.mark.parametrize("call, code", [("sys.exit()", 0), ("sys.exit(0)", 0), ("sys.exit(4)", 4),
                                        ("sys.exit('bad input')", 1)])
def test_sys_exit_is_caught_and_its_code_kept(tmp_path, call, code):
    outcome = run_script(write(tmp_path, f"import sys\n{call}\n"))
    assert outcome.exited and outcome.exit_code == code and not outcome.raised


def test_exception_is_reported_with_the_scripts_traceback(tmp_path):
    script = write(tmp_path, "def f():\n    raise ValueError('broken data')\nf()\n")
    outcome = run_script(script)
    assert outcome.raised and isinstance(outcome.error, ValueError)
    assert "broken data" in outcome.traceback_text
    assert f'File "{script}", line 3' in outcome.traceback_text
    assert "runpy" not in outcome.traceback_text and "runner.py" not in outcome.traceback_text


def test_missing_script_is_a_clear_error(tmp_path):
    with pytest.raises(ScriptNotFound, match="script not found"):
        run_script(str(tmp_path / "nope.py"))
