"""Run a user's script in this process, exactly as `python SCRIPT ARGS` would, or a
module as `python -m MODULE ARGS` would.

The script runs as `__main__` with `sys.argv = [SCRIPT, *ARGS]` and its folder
first on `sys.path` (a module: `sys.argv[0]` its file, the current folder first on
`sys.path`); a `sys.exit(n)` or an exception inside it is caught and
reported in the outcome instead of ending the caller, so whatever was
captured up to that point can still be written.
"""
from __future__ import annotations

import atexit
import importlib.util
import io
import itertools
import os
import pkgutil
import runpy
import signal
import sys
import traceback
import types
from dataclasses import dataclass

import genesis
from genesis.autograd.source import add_tool_directory
from genesis.compat import UNSUPPORTED_ERRORS

# Frames in these folders are genesis's own: a traceback folds them into one line.
_GENESIS_DIRS = (os.path.dirname(os.path.abspath(genesis.__file__)) + os.sep,
                 os.path.dirname(os.path.abspath(__file__)) + os.sep)
# genesis_cli runs the user's script: its frames (and all outside them) are not the user's.
add_tool_directory(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class ScriptOutcome:
    """How a script ended: normally, by `sys.exit(code)`, or by an exception."""

    exit_code: int = 0             # -N: ended as by signal N (Ctrl-C's KeyboardInterrupt: -2)
    exited: bool = False           # the script called sys.exit (or raised SystemExit)
    error: BaseException | None = None
    traceback_text: str = ""       # the script's traceback, without the runner's frames

    @property
    def raised(self) -> bool:
        return self.error is not None


class ScriptNotFound(FileNotFoundError):
    """The script path does not exist or is not a file, or there is no module of that name
    to run (`run_module`)."""


class _NoModuleToRun(ImportError):
    """What runpy raises when it finds no module to run (it raises the module's own errors,
    from importing its parent packages, as they are)."""


def run_script(path: str, args: list | tuple = (), clear_at_exit: bool = False) -> ScriptOutcome:
    """Run `path` as `__main__` with `args`; never raises for the script's own errors.

    With `clear_at_exit`, the script's globals are cleared when the interpreter exits, after
    the exit handlers the script registered, as Python clears `__main__`'s: what the script
    left (its model, its last graph) is then freed at once, as under `python SCRIPT`, not
    found only by the collector's last walk over every object (seconds for a big graph).

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
    return _run_as_program(lambda: _run_file_as_main(path, clear_at_exit), path, args,
                           os.path.dirname(path))


def run_module(name: str, args: list | tuple = (), clear_at_exit: bool = False) -> ScriptOutcome:
    """Run the module `name` as `__main__` with `args`, as `python -m name args` would (a
    package runs its `__main__` module); never raises for the module's own errors, and raises
    `ScriptNotFound` when there is no such module to run. `clear_at_exit` as for `run_script`.

    >>> try:
    ...     run_module("genesis_cli.no_such_module")
    ... except ScriptNotFound as error:
    ...     print(error)
    No module named genesis_cli.no_such_module
    """
    # as python -m: "-m" in sys.argv[0] while the module is looked for, then its file
    return _run_as_program(lambda: _run_module_as_main(name, clear_at_exit), "-m", args,
                           os.getcwd())


def _run_as_program(run, argv0: str, args, path0: str) -> ScriptOutcome:
    """`run()` with `sys.argv = [argv0, *args]` and `path0` first on `sys.path` (both put
    back after), its end told in a `ScriptOutcome`."""
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [argv0, *args]
    if sys.path:
        sys.path[0] = path0
    else:
        sys.path.append(path0)
    outcome = ScriptOutcome()
    try:
        run()
    except ScriptNotFound:
        raise
    except SystemExit as exit_request:
        outcome.exited = True
        outcome.exit_code = _exit_code(exit_request.code)
    except BaseException as error:  # the script's failure is reported, not propagated
        outcome.error = error
        # Ctrl-C: python ends such a script by its own SIGINT (a shell sees status 130)
        outcome.exit_code = -signal.SIGINT if isinstance(error, KeyboardInterrupt) else 1
        outcome.traceback_text = _script_traceback(error)
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0
    return outcome


def _run_file_as_main(path: str, clear_at_exit: bool) -> None:
    """`runpy.run_path(path, run_name="__main__")`, done here for a source file so that the
    module the script runs in is at hand (runpy keeps it to itself); a compiled file, a
    folder or a zip archive is left to runpy."""
    with io.open_code(path) as file:
        source = file.read()
    if pkgutil.get_importer(path) is not None or source[:4] == importlib.util.MAGIC_NUMBER:
        runpy.run_path(path, run_name="__main__")
        return
    code = compile(source, path, "exec", dont_inherit=True)  # not this file's __future__ flags
    # what runpy gives a script run from a file
    _exec_as_main(code, {"__file__": path, "__cached__": None, "__loader__": None,
                         "__package__": "", "__spec__": None}, clear_at_exit)


def _run_module_as_main(name: str, clear_at_exit: bool) -> None:
    """What `python -m name` does (`runpy._run_module_as_main`), in a module of its own as
    `runpy.run_module(name, run_name="__main__", alter_sys=True)` runs it, but kept at hand
    for `clear_at_exit` (run_module keeps it to itself). The module is found by runpy's
    own search, the one `python -m` and pdb use: it imports the parent packages, runs a
    package's `__main__`, and tells a module that is not there from one that fails."""
    try:
        _, spec, code = runpy._get_module_details(name, _NoModuleToRun)
    except _NoModuleToRun as error:
        raise ScriptNotFound(str(error)) from None
    sys.argv[0] = spec.origin
    _exec_as_main(code, {"__file__": spec.origin, "__cached__": spec.cached, "__doc__": None,
                         "__loader__": spec.loader, "__package__": spec.parent,
                         "__spec__": spec}, clear_at_exit)


def _exec_as_main(code, attributes: dict, clear_at_exit: bool) -> None:
    """Run `code` in a new module `__main__` with `attributes`, which is
    `sys.modules["__main__"]` meanwhile."""
    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace.update(attributes)
    if clear_at_exit:
        atexit.register(_clear_module_globals, namespace)  # runs after the script's own
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, namespace)
    finally:
        if saved is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = saved


def _clear_module_globals(namespace: dict) -> None:
    """Clear a module's globals as Python does at exit: the names with one leading
    underscore first, then the others, each set to None (a `__del__` that reads a global
    finds None, not a NameError); `__builtins__` stays."""
    for single_underscore_first in (True, False):
        for name in list(namespace):
            single = name.startswith("_") and not name.startswith("__")
            if name != "__builtins__" and (single or not single_underscore_first):
                namespace[name] = None


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _script_traceback(error: BaseException) -> str:
    """What is shown of the script's exception: one line for a torch name genesis does not
    serve (it names the name and the script's line already), else `_python_traceback`."""
    if isinstance(error, UNSUPPORTED_ERRORS):
        return f"{type(error).__name__}: {error}\n"
    return _python_traceback(error)


def _python_traceback(error: BaseException) -> str:
    """The traceback `python SCRIPT` would print, without the frames that are not the user's:
    the runner's and runpy's frames and importlib's (Python drops those itself) are left
    out, and runs of frames inside genesis are folded into one line. Chained exceptions
    ("During handling of the above exception...") and notes are kept. A script that does not
    compile has no frame left: it shows just the error and its place in the file, with no
    "Traceback" header, as Python does."""
    shown = traceback.TracebackException(type(error), error, error.__traceback__, compact=True)
    for part in _chained_parts(shown):
        part.stack = _UserFrames(frame for frame in part.stack
                                 if not _is_hidden_frame(frame.filename))
    return "".join(shown.format())


class _UserFrames(traceback.StackSummary):
    """The frames of a traceback that are shown: the user's, each formatted as Python does,
    with each run of frames inside genesis told as one line."""

    def format(self, **options) -> list:
        lines = []
        for inside_genesis, frames in itertools.groupby(
                self, key=lambda frame: _is_genesis_frame(frame.filename)):
            run = list(frames)
            if inside_genesis:
                lines.append(f"  [{len(run)} frame(s) inside genesis]\n")
            else:
                lines += traceback.StackSummary.from_list(run).format(**options)
        return lines


def _chained_parts(shown: traceback.TracebackException) -> list:
    """`shown` and every exception formatted with it: its cause or context, in turn, and the
    members of exception groups."""
    parts, pending, seen = [], [shown], set()
    while pending:
        part = pending.pop()
        if part is None or id(part) in seen:
            continue
        seen.add(id(part))
        parts.append(part)
        pending += [part.__cause__, part.__context__, *(getattr(part, "exceptions", None) or ())]
    return parts


def _is_hidden_frame(filename: str) -> bool:
    """A frame never shown: the runner's, runpy's, or importlib's machinery for `import`."""
    return (filename in ("<frozen runpy>", __file__) or os.path.basename(filename) == "runpy.py"
            or filename.startswith("<frozen importlib._bootstrap"))


def _is_genesis_frame(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_GENESIS_DIRS)
