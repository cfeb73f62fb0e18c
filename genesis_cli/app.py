"""The Typer application behind the `genesis` command, with every subcommand."""
from __future__ import annotations

from .command import GenesisCommand
from .commands import compare, compat, diff, gradcheck, render
from .root import add_trace, new_app

app = new_app()
add_trace(app)
app.command("gradcheck", cls=GenesisCommand)(gradcheck.gradcheck_command)
app.command("render", cls=GenesisCommand)(render.render_command)
app.command("compat", cls=GenesisCommand)(compat.compat_command)
app.command("compare", cls=GenesisCommand)(compare.compare_command)
app.command("diff", cls=GenesisCommand)(diff.diff_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
