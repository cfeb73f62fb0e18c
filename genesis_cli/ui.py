"""Console helpers shared by the `genesis` commands: one way to make a Console,
tables, status colours, messages and a progress bar.

Colour is dropped for `NO_COLOR`, `--no-color` and output that is not a
terminal; such output is also laid out wider (120 columns unless `COLUMNS`
says otherwise) so tables written to files and pipes don't wrap at 80.

>>> console = make_console(no_color=True, width=60)
>>> table = new_table("name", ("status", "center"))
>>> table.add_row("Square", status_text("PASS"))
>>> with console.capture() as captured:
...     console.print(table)
>>> "Square" in captured.get() and "PASS" in captured.get()
True
"""
from __future__ import annotations

import os
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

__all__ = ["make_console", "new_table", "status_text", "print_error", "print_warning",
           "progress", "STATUS_STYLES", "PIPE_WIDTH"]

STATUS_STYLES = {"PASS": "bold green", "FAIL": "bold red", "ERROR": "bold magenta",
                 "SKIP": "yellow", "WARN": "yellow", "INFO": "cyan"}
PIPE_WIDTH = 120


def make_console(*, no_color: bool = False, stderr: bool = False, width: int | None = None) -> Console:
    """A Console on stdout (or stderr) that honours NO_COLOR, `no_color` and non-TTY output
    (without colour it writes no escape codes at all: no bold either).

    The stream is looked up when printing, so output redirected after the
    Console was made (test runners, `contextlib.redirect_stdout`) still lands there.
    """
    plain = no_color or bool(os.environ.get("NO_COLOR"))
    console = Console(stderr=stderr, highlight=False, width=width,
                      **({"color_system": None} if plain else {}))
    if width is None and not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


def new_table(*columns, title: str | None = None, unbroken: tuple = ()) -> Table:
    """A table in the house style; a column is a name or (name, justify). Cells of the
    columns named in `unbroken` (a `file:line`, say) are never broken across lines: the
    other columns wrap to make room."""
    table = Table(title=title, title_justify="left", header_style="bold", show_edge=False,
                  pad_edge=False, box=None, padding=(0, 2, 0, 0))
    for column in columns:
        name, justify = (column, "left") if isinstance(column, str) else column
        table.add_column(name, justify=justify, overflow="fold", no_wrap=name in unbroken)
    return table


def status_text(status: str) -> Text:
    """PASS/FAIL/ERROR/SKIP/WARN/INFO in its colour."""
    return Text(status, style=STATUS_STYLES.get(status, ""))


def print_error(console: Console, message: str) -> None:
    """One line: `error: message` (no markup is read from `message`)."""
    console.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)


def print_warning(console: Console, message: str) -> None:
    console.print(Text.assemble(("warning: ", "bold yellow"), message), soft_wrap=True)


@contextmanager
def progress(console: Console, description: str, total: int):
    """A transient progress bar on `console` (shown only on a terminal). Yields
    `advance(label)`, which moves the bar one step and shows `label` beside it."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("{task.fields[label]}"),
                   console=console, transient=True, disable=not console.is_terminal)
    with bar:
        task = bar.add_task(description, total=total, label="")

        def advance(label: str = "") -> None:
            bar.update(task, advance=1, label=label)

        yield advance
