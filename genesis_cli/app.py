"""The Typer application behind the `genesis` command."""
from __future__ import annotations

import typer

import genesis

from .command import GenesisCommand
from .commands import compare, compat, diff, gradcheck, render, trace

app = typer.Typer(
    name="genesis",
    help="Genesis: see your autograd graph and find the wrong gradient.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"genesis {genesis.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Genesis: see your autograd graph and find the wrong gradient."""


app.command("trace", cls=GenesisCommand, context_settings=trace.CONTEXT)(trace.trace_command)
app.command("gradcheck", cls=GenesisCommand)(gradcheck.gradcheck_command)
app.command("render", cls=GenesisCommand)(render.render_command)
app.command("compat", cls=GenesisCommand)(compat.compat_command)
app.command("compare", cls=GenesisCommand)(compare.compare_command)
app.command("diff", cls=GenesisCommand)(diff.diff_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
