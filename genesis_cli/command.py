"""The Typer command class of every `genesis` subcommand: an unknown option is named as
such, with the closest valid option ("did you mean --steps?"), on standard error, exit 2.

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

from typer.core import TyperCommand

try:  # Typer vendors Click since 0.20; before that it used Click itself
    from typer._click.exceptions import NoSuchOption
except ImportError:  # pragma: no cover - older Typer
    from click.exceptions import NoSuchOption

__all__ = ["GenesisCommand", "closest_option"]


class GenesisCommand(TyperCommand):
    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            names = [name for param in self.get_params(ctx)
                     for name in (*param.opts, *param.secondary_opts) if name.startswith("-")]
            raise NoSuchOption(error.option_name, message=closest_option(error.option_name, names),
                               ctx=ctx) from None


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
