"""`genesis trace` parses its command line without pydantic (genesis_cli.plain_values): each
plain value comes out as Typer's own pydantic-backed coercion gives it, and every other value
is refused by Typer, with its message."""
import subprocess
import sys
from pathlib import Path

import pytest
import typer.core
from typer.main import get_command

from genesis_cli.plain_values import PlainValues, _plain_kind
from genesis_cli.root import trace_app

pytestmark = pytest.mark.skipif(not hasattr(typer.core._TyperParameter, "get_runtime_param"),
                                reason="a Typer without pydantic checks: nothing taken over")

VALUES = [None, "", "3", "007", "+3", " 3", "3_0", "\u0663", "1e3", "-1", "0", "10", "9" * 18,
          "9" * 19, 5, 0, True, False, "x.py", "svg", "-", "a\0b", "/nonexistent/folder/x",
          Path("out"), ("a", "b"), ["a"], (), ("a", 1), "yes", "no"]


def outcome(coerce, value, param, ctx):
    try:
        result = coerce(value, param=param, ctx=ctx)
    except Exception as error:  # noqa: BLE001 - compared below, type and message
        return type(error).__name__, str(error)
    return type(result).__name__, result


def test_every_value_comes_out_as_typers_own_coercion_gives_it(tmp_path):
    from typer._coercion import build_runtime_param

    group = get_command(trace_app())
    command = group.commands["trace"]
    ctx = command.make_context("trace", ["x.py"], parent=group.make_context("genesis", ["trace"]))
    values = [*VALUES, str(tmp_path), str(tmp_path / "missing"), tmp_path]
    taken = 0
    for param in [*command.get_params(ctx), *group.get_params(ctx.parent)]:
        typers = build_runtime_param(param.type_descriptor)
        kind = _plain_kind(param.type_descriptor)
        if kind is None:
            continue
        taken += 1
        ours = PlainValues(kind)
        for value in values:
            assert outcome(ours.coerce, value, param, ctx) == outcome(typers.coerce, value, param, ctx), \
                (param.name, kind, value)
    assert taken == len(command.get_params(ctx)) + len(group.get_params(ctx.parent))


def test_parsing_a_trace_command_line_imports_no_pydantic(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hello')\n")
    probe = (
        "import sys\n"
        "import genesis_cli.supervise as supervise\n"
        "def stop(*args, **kwargs):\n"
        "    print(sorted(name for name in sys.modules if name.startswith('pydantic')))\n"
        "    raise SystemExit(0)\n"
        "supervise._child_running = stop\n"
        "from genesis_cli.root import trace_app\n"
        f"sys.argv = ['genesis', 'trace', '--steps', '2', '--max-nodes', '50', '--format', 'svg', "
        f"'--out', {str(tmp_path / 'out')!r}, {str(script)!r}, '--', 'a', 'b']\n"
        "trace_app()()\n")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
