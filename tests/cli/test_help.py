"""`genesis --help`: each command's short help is one sentence on one line."""
import inspect
import re

from typer.testing import CliRunner

from genesis_cli.app import app


def test_each_commands_short_help_is_one_line_in_the_command_list():
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0, result.output
    names = [command.name for command in app.registered_commands]
    rows = [line.strip("│ ").rstrip() for line in result.output.splitlines()
            if re.match(r"^│ +\S", line)]
    listed = [row for row in rows if row.split()[0] in names]
    assert [row.split()[0] for row in listed] == names, result.output
    continued = [row for row in rows if row.split()[0] not in names and not row.startswith("-")]
    assert continued == [], f"a short help broken over lines:\n{result.output}"
    for row in listed:
        assert row.endswith("."), f"short help cut mid-sentence: {row!r}"


def test_each_commands_first_paragraph_is_one_line():
    for command in app.registered_commands:
        first = inspect.getdoc(command.callback).split("\n\n")[0]
        assert "\n" not in first, f"genesis {command.name}: the short help {first!r} has a line break"
