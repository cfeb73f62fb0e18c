"""Running scripts in-process like `python SCRIPT ARGS`."""
import py_compile
import subprocess
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


def test_the_script_sees_what_runpy_gives_a_file_and_its_own_future_flags(tmp_path, capsys):
    script = write(tmp_path, (
        "def f(x: undefined_name): pass\n"  # evaluated: the runner's own __future__ is not the script's
        "print(__name__, __file__ == SCRIPT, __package__ == '', __spec__, __loader__, __cached__)\n"
    ).replace("SCRIPT", repr(str(tmp_path / "script.py"))))
    outcome = run_script(script)
    assert outcome.raised and isinstance(outcome.error, NameError)
    script = write(tmp_path, (
        "import sys\n"
        "print(__name__, __file__ == SCRIPT, repr(__package__), __spec__, __loader__, __cached__,"
        " sys.modules['__main__'].__dict__ is globals())\n"
    ).replace("SCRIPT", repr(str(tmp_path / "script.py"))))
    main_before = sys.modules["__main__"]
    assert run_script(script).exit_code == 0
    assert capsys.readouterr().out == "__main__ True '' None None None True\n"
    assert sys.modules["__main__"] is main_before


def test_a_compiled_script_is_run_too(tmp_path, capsys):
    source = write(tmp_path, "print('compiled', __name__)\n", name="compiled_source.py")
    compiled = py_compile.compile(source, cfile=str(tmp_path / "compiled.pyc"))
    assert run_script(compiled).exit_code == 0
    assert capsys.readouterr().out == "compiled __main__\n"


def test_under_genesis_trace_the_globals_are_cleared_after_the_exit_handlers(tmp_path):
    """As under `python SCRIPT`: the script's exit handlers see its globals, and a file it
    never closed is flushed when they are cleared."""
    log, saved = tmp_path / "log.txt", tmp_path / "saved.txt"
    script = write(tmp_path, (
        "import atexit\n"
        f"log = open({str(log)!r}, 'w')\n"
        "log.write('written, never closed\\n')\n"
        "model = {'steps': 3}\n"
        "def save():\n"
        f"    with open({str(saved)!r}, 'w') as out:\n"
        "        out.write(f\"saved after {model['steps']} steps\\n\")\n"
        "atexit.register(save)\n"))
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "trace", "--no-html",
                                "--out", str(tmp_path / "out"), script],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 4, completed.stderr  # no backward call: nothing checked
    assert saved.read_text() == "saved after 3 steps\n"
    assert log.read_text() == "written, never closed\n"
