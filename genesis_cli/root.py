"""The `genesis` command's root: the Typer application with its `--version`, to which the
subcommands are added (`genesis_cli.app` adds them all).

`genesis trace` is parsed by an application that holds `trace` alone (`trace_app`), so that
parsing its command line imports nothing of genesis: the script's process, started
first, gets its orders sooner (see `genesis_cli.trace_settings`). Its usage, help and
errors are those of `genesis trace` in the full application.
"""
from __future__ import annotations

import typer

from .command import GenesisGroup, TraceCommand

__all__ = ["new_app", "add_trace", "trace_app"]


def _print_version(value: bool) -> None:
    if value:
        import genesis

        typer.echo(f"genesis {genesis.__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Genesis: see your autograd graph and find the wrong gradient."""


def new_app() -> typer.Typer:
    """The `genesis` application, without subcommands."""
    app = typer.Typer(
        name="genesis",
        cls=GenesisGroup,
        help="Genesis: see your autograd graph and find the wrong gradient.",
        no_args_is_help=True,
        add_completion=False,
    )
    app.callback()(_root)
    return app


def add_trace(app: typer.Typer) -> None:
    """Add `genesis trace` to `app`."""
    from .commands import trace

    app.command("trace", cls=TraceCommand, context_settings=trace.CONTEXT)(trace.trace_command)


def trace_app() -> typer.Typer:
    """The application `genesis trace ...` is parsed with: the root and `trace` alone."""
    app = new_app()
    add_trace(app)
    return app
