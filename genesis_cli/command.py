"""The Typer command class of every `genesis` subcommand: an unknown option is named as
such, with the closest valid option ("did you mean --steps?"), on standard error, exit 2.
`genesis trace`'s (`TraceCommand`) also ends its options at `-m MODULE`, as python does.

>>> import typer
>>> from typer.testing import CliRunner
>>> app = typer.Typer()
>>> @app.command(cls=GenesisCommand)
... def run(steps: int = typer.Option(1, "--steps")):
...     pass
>>> result = CliRunner().invoke(app, ["--stpes", "3"])
>>> result.exit_code, "unknown option --stpes; did you mean --steps?" in result.output
(2, True)
"""
from __future__ import annotations

import difflib

from typer.core import TyperCommand, TyperGroup

from .plain_values import take_plain_values

try:  # Typer vendors Click since 0.20; before that it used Click itself
    from typer._click.exceptions import NoSuchOption
except ImportError:  # pragma: no cover - older Typer
    from click.exceptions import NoSuchOption

__all__ = ["GenesisCommand", "GenesisGroup", "TraceCommand", "closest_option", "options_end_at_module"]


class GenesisCommand(TyperCommand):
    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            names = [name for param in self.get_params(ctx)
                     for name in (*param.opts, *param.secondary_opts) if name.startswith("-")]
            raise NoSuchOption(error.option_name, message=closest_option(error.option_name, names),
                               ctx=ctx) from None


class GenesisGroup(TyperGroup):
    """The `genesis` application's: the plain values of its own options (--version, --help)
    are checked without pydantic, as `genesis trace`'s are (see `TraceCommand`)."""

    def parse_args(self, ctx, args):
        take_plain_values(self.get_params(ctx))
        return super().parse_args(ctx, args)


class TraceCommand(GenesisCommand):
    """`genesis trace`'s: like `python -m MODULE ARGS`, `-m MODULE` (or `--module MODULE`) is
    the last of its options; all that follows goes to the module. Its plain option values
    are checked without pydantic (`genesis_cli.plain_values`): this process waits beside the
    script's while it runs, and holds what it imported."""

    def parse_args(self, ctx, args):
        taking_values = [name for param in self.get_params(ctx)
                         if param.param_type_name == "option" and not param.is_flag
                         and not param.count for name in param.opts]
        take_plain_values(self.get_params(ctx))
        return super().parse_args(ctx, options_end_at_module(args, taking_values))


def options_end_at_module(args: list, taking_values: list) -> list:
    """`args` with `--` put after the module's name when `-m`/`--module` is among the
    options (those before the first argument that is not one; `taking_values`: the names
    of the options that take a value), so that what follows it is the module's.

    >>> options_end_at_module(["--steps", "3", "-m", "pkg.train", "--lr", "1"], ["--steps"])
    ['--steps', '3', '-m', 'pkg.train', '--', '--lr', '1']
    >>> options_end_at_module(["-qmpkg.train", "-v"], [])
    ['-qmpkg.train', '--', '-v']
    >>> options_end_at_module(["train.py", "-m", "x"], [])
    ['train.py', '-m', 'x']
    """
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--" or arg == "-" or not arg.startswith("-"):
            return args  # the options end here
        if arg.startswith("--"):
            name, equals, _ = arg.partition("=")
            if name == "--module":
                return _ended(args, index + (1 if equals else 2))
            index += 2 if name in taking_values and not equals else 1
            continue
        for at, letter in enumerate(arg[1:], start=1):  # -q, -qm NAME, -mNAME, -o OUT
            if letter == "m":
                return _ended(args, index + (1 if at + 1 < len(arg) else 2))
            if f"-{letter}" in taking_values:
                index += 1 if at + 1 < len(arg) else 2  # its value: the rest, or the next
                break
        else:
            index += 1
    return args


def _ended(args: list, end: int) -> list:
    return [*args[:end], "--", *args[end:]] if end <= len(args) else args


def closest_option(given: str, names: list) -> str:
    """The error line for an unknown option `given`, naming the closest of `names`.

    >>> closest_option("--stpes", ["--steps", "--open", "--out"])
    'unknown option --stpes; did you mean --steps?'
    >>> closest_option("--zzz", ["--steps"])
    'unknown option --zzz (see --help for the options)'
    """
    shown = given.encode("unicode_escape").decode("ascii")
    match = difflib.get_close_matches(given, names, n=1, cutoff=0.5)
    if match:
        return f"unknown option {shown}; did you mean {match[0]}?"
    return f"unknown option {shown} (see --help for the options)"
