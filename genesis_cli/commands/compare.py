"""`genesis compare A B`: do two implementations give the same outputs and gradients?

    genesis compare attention.py:naive attention.py:fused --shape 2,16,32
    genesis compare my_ops.py:Swish mypkg.reference:swish --dtype float32
    genesis compare model.py:Block model.py:FusedBlock --shape 4,8,64

A and B are `file.py:Name` or `package.module:Name`: custom Functions, plain callables, or
Modules (a Module class is built with no arguments; B's parameters are copied from A's by
name). Both run on the same random inputs (or A's `gradcheck_inputs()`), in float64 unless
--dtype says otherwise; their outputs and the gradients with respect to every input and
parameter are compared, one row each, then the worst entries of each that differs. Exit
status 0 when they agree, 1 when they differ, 2 for a usage error.
"""
from __future__ import annotations

import json

import numpy as np
import typer
from rich.text import Text

from genesis.debug.compare import compare
from genesis.nn import Module

from ..targets import Target, TargetError, build_inputs, parse_device, parse_dtype, parse_shape, resolve
from ..tolerance_options import tolerance
from ..ui import STATUS_STYLES, make_console, new_table, print_error

__all__ = ["compare_command"]


def compare_command(
    a: str = typer.Argument(..., show_default=False, metavar="A", help=(
        "The first implementation: file.py:Name or package.module:Name.")),
    b: str = typer.Argument(..., show_default=False, metavar="B", help=(
        "The second implementation, compared with A.")),
    shape: list[str] | None = typer.Option(None, "--shape", help=(
        "Shape of one random input, like 3,4 (repeat once per input). Default: each input 3,4, "
        "or A's gradcheck_inputs().")),
    dtype: str = typer.Option("float64", "--dtype", help=(
        "Dtype both run in (float64 recommended: rounding neither hides nor fakes a difference).")),
    device: str = typer.Option("cpu", "--device", help="Where the inputs live: cpu, cuda or cuda:N."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs and output gradients."),
    atol: float | None = typer.Option(None, "--atol", callback=tolerance, help=(
        "Absolute tolerance, >= 0 (default: by dtype, as torch.testing.assert_close).")),
    rtol: float | None = typer.Option(None, "--rtol", callback=tolerance, help=(
        "Relative tolerance, >= 0 (default: by dtype).")),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary instead of tables."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (also: NO_COLOR=1)."),
) -> None:
    """Compare two implementations' outputs and gradients on the same inputs.

    Examples: genesis compare attention.py:naive attention.py:fused --shape 2,16,32;
    genesis compare model.py:Block model.py:FusedBlock --shape 4,8,64
    """
    out = make_console(no_color=no_color)
    err = make_console(no_color=no_color, stderr=True)
    try:
        chosen_dtype = parse_dtype(dtype)
        chosen_device = parse_device(device)
        shapes = [parse_shape(text) for text in shape or ()]
        first, second = _one_target(a), _one_target(b)
        inputs = build_inputs(_for_inputs(first), shapes, chosen_dtype, seed, chosen_device)
        result = compare(first.obj, second.obj, *inputs.args, dtype=chosen_dtype, atol=atol,
                         rtol=rtol, seed=seed, names=("A", "B"))
    except (TargetError, ValueError) as error:
        print_error(err, str(error))
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(_summary(first.name, second.name, inputs.description, result), indent=2))
    else:
        _print_report(out, first.name, second.name, inputs.description, result)
    raise typer.Exit(0 if result.agree else 1)


def _one_target(spec: str) -> Target:
    """The single implementation `spec` names; a Module class is built with no arguments."""
    targets = resolve(spec)
    if len(targets) != 1:
        names = ", ".join(target.name for target in targets)
        raise TargetError(f"{spec} holds {len(targets)} Functions ({names}); name one: file.py:Name")
    target = targets[0]
    if isinstance(target.obj, type) and issubclass(target.obj, Module):
        try:
            module = target.obj()
        except TypeError as error:
            raise TargetError(f"{target.name} is a Module class whose constructor needs arguments "
                              f"({error}); name a module instance or a function that builds one "
                              "with its arguments") from None
        return Target(target.name, module, module)
    return target


def _for_inputs(target: Target) -> Target:
    """The target whose signature says how many inputs to make (a Module's forward)."""
    if isinstance(target.obj, Module):
        return Target(target.name, target.obj.forward, target.obj)
    return target


def _print_report(console, name_a: str, name_b: str, inputs: str, result) -> None:
    console.print(f"A = {name_a}\nB = {name_b}\ninputs: {inputs}; compared in {result.dtype.name}, "
                  f"atol={result.atol:g}, rtol={result.rtol:g}", markup=False)
    for note in result.notes:
        console.print(f"note: {note}", markup=False)
    table = new_table("value", ("shape", "right"), ("max abs error", "right"),
                      ("max rel error", "right"), ("result", "center"), "note")
    for row in result.rows:
        table.add_row(row.name, "-" if row.shape is None else str(tuple(row.shape)),
                      _number(row.max_abs_error), _number(row.max_rel_error),
                      _verdict(row.agree), row.note)
    console.print(table)
    for row in result.rows:
        if row.agree or not row.worst:
            continue
        console.print()
        console.print(f"{row.name}: {row.differing} of {row.total} "
                      f"entr{'ies' if row.total != 1 else 'y'} "
                      f"differ{'s' if row.differing == 1 else ''} beyond "
                      f"atol + rtol x |value|" + (f"; {row.note}" if row.note else ""), markup=False)
        worst = new_table(("index", "right"), ("A", "right"), ("B", "right"), ("A - B", "right"))
        for index, left, right in row.worst:
            worst.add_row(str(index), f"{left:.6g}", f"{right:.6g}", f"{left - right:.3g}")
        console.print(worst)
    agreeing = sum(1 for row in result.rows if row.agree)
    console.print()
    if result.agree:
        console.print(f"A and B agree: {agreeing} value{'s' if agreeing != 1 else ''} compared "
                      "(outputs and gradients).", markup=False)
    else:
        console.print(f"A and B differ in {len(result.rows) - agreeing} of {len(result.rows)} "
                      "values compared.", markup=False)


def _verdict(agree: bool) -> Text:
    return Text("agree", style=STATUS_STYLES["PASS"]) if agree else \
        Text("DIFFER", style=STATUS_STYLES["FAIL"])


def _number(value) -> str:
    return "-" if value is None else f"{value:.2e}"


def _summary(name_a: str, name_b: str, inputs: str, result) -> dict:
    return {"agree": result.agree, "a": name_a, "b": name_b, "inputs": inputs,
            "dtype": result.dtype.name, "atol": result.atol, "rtol": result.rtol,
            "seed": result.seed, "notes": result.notes,
            "values": [{"name": row.name, "agree": row.agree,
                        "shape": None if row.shape is None else list(row.shape),
                        "max_abs_error": _finite(row.max_abs_error),
                        "max_rel_error": _finite(row.max_rel_error),
                        "differing": row.differing, "total": row.total, "note": row.note or None,
                        "worst": [{"index": list(index), "a": _finite(left), "b": _finite(right)}
                                  for index, left, right in row.worst]}
                       for row in result.rows]}


def _finite(value):
    return None if value is None or not np.isfinite(value) else float(value)

