"""Running test code under a `TraceSession`, and finding the lines findings point at."""
import inspect

from genesis.debug.session import TraceSession


def traced(run) -> list:
    """The findings of a `--no-check` session around `run()`."""
    with TraceSession(check=False) as session:
        run()
    return session.result(script="t.py").findings


def line_of(function, text: str) -> int:
    """The number of the first line of `function`'s source that holds `text`."""
    lines, start = inspect.getsourcelines(function)
    return start + next(number for number, line in enumerate(lines) if text in line)
