"""Runs corpus programs with PyTorch as `python PROGRAM` would, paying `import torch` (seconds)
once, with the torch._dynamo that every optimizer's first step imports: it imports them,
then forks itself for each program, whose child runs the program as `__main__` with its
stdout and stderr in files. One JSON request a line on stdin
({"program", "env", "stdout", "stderr"}), one JSON answer a line on stdout ({"returncode"}).

Run: python -m tests.compat.torch_runner   (tests/compat/test_corpus.py starts it)
"""
import json
import os
import runpy
import sys
import traceback


def _run_child(request: dict) -> int:
    """In the forked child: the program as `python PROGRAM`; returns its exit status."""
    for stream, path in ((1, request["stdout"]), (2, request["stderr"])):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(descriptor, stream)
        os.close(descriptor)
    os.environ.update(request["env"])
    program = request["program"]
    sys.argv = [program]
    sys.path[0] = os.path.dirname(os.path.abspath(program))
    try:
        runpy.run_path(program, run_name="__main__")
        return 0
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def serve() -> None:
    import torch  # noqa: F401  (what every program imports: once, before the forks)
    # The first optimizer step imports torch._dynamo (about 820 modules, 2 s): once here,
    # not in every program's child.
    import torch._dynamo  # noqa: F401
    answers = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        child = os.fork()
        if child == 0:  # never back into this loop, whatever happens
            status = 1
            try:
                status = _run_child(request)
            finally:
                os._exit(status)
        _, status = os.waitpid(child, 0)
        answers.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
