"""Run a user's script in this process, exactly as `python SCRIPT ARGS` would.

The script runs as `__main__` with `sys.argv = [SCRIPT, *ARGS]` and its folder
first on `sys.path`; a `sys.exit(n)` or an exception inside it is caught and
reported in the outcome instead of ending the caller, so whatever was
captured up to that point can still be written.
"""
from __future__ import annotations

import os
import runpy
import sys
import traceback
from dataclasses import dataclass

import genesis

_GENESIS_DIR = os.path.dirname(os.path.abspath(genesis.__file__)) + os.sep


@dataclass
class ScriptOutcome:
    """How a script ended: normally, by `sys.exit(code)`, or by an exception."""

    exit_code: int = 0
    exited: bool = False           # the script called sys.exit (or raised SystemExit)
    error: BaseException | None = None
    traceback_text: str = ""       # the script's traceback, without the runner's frames

    @property
    def raised(self) -> bool:
        return self.error is not None


class ScriptNotFound(FileNotFoundError):
    """The script path does not exist or is not a file."""


def run_script(path: str, args: list | tuple = ()) -> ScriptOutcome:
    """Run `path` as `__main__` with `args`; never raises for the script's own errors.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     script = os.path.join(folder, "hello.py")
    ...     _ = open(script, "w").write("import sys; sys.exit(3)")
    ...     run_script(script).exit_code
    3
    """
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ScriptNotFound(f"script not found: {path} (check the path; it must be a .py file)")
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [path, *args]
    folder = os.path.dirname(path)
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    outcome = ScriptOutcome()
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit_request:
        outcome.exited = True
        outcome.exit_code = _exit_code(exit_request.code)
    except BaseException as error:  # the script's failure is reported, not propagated
        outcome.error = error
        outcome.exit_code = 1
        outcome.traceback_text = _script_traceback(error, path)
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0
    return outcome


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _script_traceback(error: BaseException, script: str) -> str:
    """The traceback from the script's first frame on (the runner's and runpy's frames
    dropped), with runs of frames inside genesis itself folded into one line. A script that
    does not compile shows just the error and its place in the file."""
    if isinstance(error, SyntaxError):
        return "".join(traceback.format_exception_only(type(error), error))
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not _is_runner_frame(frame.filename)]
    start = next((i for i, frame in enumerate(frames) if os.path.abspath(frame.filename) == script), 0)
    lines = ["Traceback (most recent call last):\n"]
    hidden = 0
    for frame in frames[start:]:
        if os.path.abspath(frame.filename).startswith(_GENESIS_DIR):
            hidden += 1
            continue
        if hidden:
            lines.append(f"  [{hidden} frame(s) inside genesis]\n")
            hidden = 0
        lines += traceback.format_list([frame])
    if hidden:
        lines.append(f"  [{hidden} frame(s) inside genesis]\n")
    lines += traceback.format_exception_only(type(error), error)  # includes the notes
    return "".join(lines)


def _is_runner_frame(filename: str) -> bool:
    return filename in ("<frozen runpy>", __file__) or os.path.basename(filename) == "runpy.py"
