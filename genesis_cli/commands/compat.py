"""`genesis compat SCRIPT...`: before running a PyTorch script on genesis, list every torch
name it uses and which of them genesis lacks (a static scan, `genesis.compat.scan`).

Exit status: 0 genesis serves every name found; 1 some are missing; 2 usage error (a
script not found, or one that does not parse).
"""
from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.text import Text

from genesis.compat.scan import ScanError, missing, torch_uses

from ..ui import make_console, new_table, print_error, status_text

EXIT_MISSING, EXIT_USAGE = 1, 2


def compat_command(
    scripts: list[Path] = typer.Argument(..., metavar="SCRIPT...",
                                         help="The PyTorch scripts to scan (not run)."),
    only_missing: bool = typer.Option(False, "--missing", help="List only the names genesis lacks."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours."),
) -> None:
    """List the torch names SCRIPT uses and which genesis lacks, without running it.

    Imports and names reached through them (`nn.Linear`, `torch.cuda.is_available`) are
    found; methods called on tensors (`x.topk(3)`) are not: `genesis trace --torch` stops at
    the first of those genesis lacks, naming it.

    Examples:

      genesis compat train.py

      genesis compat --missing src/*.py
    """
    console = make_console(no_color=no_color)
    errors = make_console(no_color=no_color, stderr=True)
    uses = []
    for script in scripts:
        if not script.is_file():
            print_error(errors, f"script not found: {script} (give the path of a .py file)")
            raise typer.Exit(EXIT_USAGE)
        try:
            uses.extend(torch_uses(script.read_text(encoding="utf-8", errors="replace"), str(script)))
        except ScanError as error:
            print_error(errors, str(error))
            raise typer.Exit(EXIT_USAGE) from None
    rows = _rows(uses)
    lacking = [row for row in rows if row["missing"] is not None]
    shown = lacking if only_missing else rows
    if as_json:
        typer.echo(json.dumps({"names": shown, "used": len(rows), "missing": len(lacking)}, indent=2))
    else:
        _print_table(console, shown, len(rows), len(lacking), len(scripts))
    raise typer.Exit(EXIT_MISSING if lacking else 0)


def _rows(uses: list) -> list:
    """One row per torch name: whether genesis serves it (None) or the part it lacks, and
    where it is used (first place, and how many places in all)."""
    by_name = {}
    for use in uses:
        by_name.setdefault(use.name, []).append(f"{use.file}:{use.line}")
    return [{"name": name, "missing": missing(name), "used_at": places[0], "uses": len(places)}
            for name, places in sorted(by_name.items())]


def _print_table(console, rows: list, used: int, lacking: int, scripts: int) -> None:
    if rows:
        table = new_table("torch name", "genesis", "used at", unbroken=("torch name", "used at"))
        for row in rows:
            status = status_text("PASS" if row["missing"] is None else "FAIL")
            status = Text("serves it", style=status.style) if row["missing"] is None else \
                Text("lacks " + row["missing"], style=status.style)
            more = f" (+{row['uses'] - 1} more)" if row["uses"] > 1 else ""
            table.add_row(Text(row["name"]), status, Text(row["used_at"] + more))
        console.print(table)
        console.print()
    files = f"{scripts} script{'s' if scripts != 1 else ''}"
    if used == 0:
        console.print(f"No torch names found in {files}: nothing imports torch.")
    elif lacking:
        verb = "is" if lacking == 1 else "are"
        console.print(f"{lacking} of {used} torch names used in {files} {verb} missing from "
                      f"genesis; `genesis trace --torch` stops at the first one it reaches.",
                      soft_wrap=True)
    else:
        console.print(f"genesis serves all {used} torch names used in {files}. Methods "
                      "called on tensors are not scanned: `genesis trace --torch` names any "
                      "it lacks.", soft_wrap=True)
