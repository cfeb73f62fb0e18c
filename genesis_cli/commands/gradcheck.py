"""`genesis gradcheck`: check custom Functions, plain functions or the built-in ops
against finite differences, from the command line.

    genesis gradcheck my_ops.py                  every Function subclass in the file
    genesis gradcheck my_ops.py:Swish --shape 8  one Function (or callable), inputs of shape (8,)
    genesis gradcheck mypkg.layers:attention     a callable in an importable module
    genesis gradcheck --ops                      every op in the registry
    genesis gradcheck --ops mul,div              some ops (or --filter SUBSTRING)

One row per target (per op with --ops): PASS, FAIL, ERROR (it raised) or SKIP
(not differentiable: an op without a gradient, or a target whose only entries out of
tolerance sit on a kink, as `genesis trace` says); each failure is then explained with the worst Jacobian
entries and the check that failed. Exit status 0 when nothing failed or
raised, 1 otherwise, 2 for a usage error.
"""
from __future__ import annotations

import contextlib
import difflib
import inspect
import json
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
import typer

import genesis
from genesis.autograd import LeafModifiedInPlaceError, check_gradients
from genesis.autograd.gradcheck import GradcheckWarning
from genesis.autograd.gradcheck_report import CHECKS, GradcheckResult, Tolerances, format_report
from genesis.compat import serve_torch
from genesis.debug.compare import default_tolerances as dtype_tolerances
from genesis.debug.node_check import declared_surrogate, surrogate_advice
from genesis.ops.registry import all_ops

from ..targets import (TargetError, build_inputs, on_device as _on, parse_device, parse_dtype,
                       parse_shape, resolve)
from ..tolerance_options import step, tolerance
from ..ui import make_console, new_table, print_error, print_warning, progress, status_text

__all__ = ["gradcheck_command", "Row", "check_target", "check_op", "select_ops",
           "default_tolerances"]


@dataclass
class Row:
    """The verdict on one target (or one op, over its samples)."""

    name: str
    status: str                         # PASS, FAIL, ERROR or SKIP
    checked: str                        # what was checked, in words
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    failures: list = field(default_factory=list)   # (where, GradcheckResult); where may be ""
    errors: list = field(default_factory=list)     # (where, "Type: message ...")
    warnings: list = field(default_factory=list)   # warnings raised while checking, once each
    advice: str = ""                    # after the failure's report: what the author may mean


@dataclass(frozen=True)
class CheckOptions:
    tolerances: Tolerances
    fast: bool
    max_report: int
    device: object = genesis.device("cpu")  # where the inputs are made and the check runs

    def run(self, func, args) -> GradcheckResult:
        return check_gradients(func, args, eps=self.tolerances.eps, atol=self.tolerances.atol,
                               rtol=self.tolerances.rtol, fast_mode=self.fast,
                               max_report=self.max_report)


def gradcheck_command(
    target: str | None = typer.Argument(None, show_default=False, metavar="TARGET", help=(
        "file.py (every Function subclass in it), file.py:Name or package.module:Name; "
        "with --ops: op names, comma-separated (default: all ops).")),
    shape: list[str] | None = typer.Option(None, "--shape", help=(
        "Shape of one random input, like 3,4 (repeat once per input). Default: each input 3,4, "
        "or the target's gradcheck_inputs().")),
    dtype: str = typer.Option("float64", "--dtype", help="Dtype of the random inputs (float64 recommended)."),
    device: str = typer.Option("cpu", "--device", help=(
        "Where the inputs live and the check runs: cpu, cuda or cuda:N (a Function with GPU "
        "code is checked on the GPU).")),
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
    eps: float = typer.Option(1e-6, "--eps", callback=step, help="Finite-difference step (> 0)."),
    atol: float | None = typer.Option(None, "--atol", callback=tolerance, show_default=False, help=(
        "Absolute tolerance (>= 0). Default: 1e-5.")),
    rtol: float | None = typer.Option(None, "--rtol", callback=tolerance, show_default=False, help=(
        "Relative tolerance (>= 0). Default: 1e-3; 1.6e-2 with --dtype bfloat16, whose 8-bit "
        "significand rounds the analytical gradient by up to 0.4% (torch.testing's tolerance).")),
    fast: bool = typer.Option(False, "--fast", help="Compare random projections v^T J u (re-checks a failure exactly)."),
    max_report: int = typer.Option(10, "--max-report", min=1, help="Worst entries shown per failure."),
    ops: bool = typer.Option(False, "--ops", help="Check the built-in ops of the registry instead of a target."),
    name_filter: str | None = typer.Option(None, "--filter", help="With --ops: only ops whose name contains this."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary instead of tables."),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (also: NO_COLOR=1)."),
    torch: bool = typer.Option(False, "--torch", help=(
        "Import the target with genesis standing in for `import torch`: a PyTorch file's "
        "torch.autograd.Function subclasses are checked as they are.")),
) -> None:
    """Check gradients against finite differences: custom Functions, functions, or the built-in ops.

    Examples: genesis gradcheck my_ops.py; genesis gradcheck my_ops.py:MatMul --shape 3,4 --shape 4,5;
    genesis gradcheck mypkg.layers:swish; genesis gradcheck --ops mul,div;
    genesis gradcheck my_cuda_ops.py --device cuda; genesis gradcheck --torch torch_ops.py
    """
    with serve_torch() if torch else contextlib.nullcontext():
        _gradcheck(target, shape, dtype, device, seed, eps, atol, rtol, fast, max_report, ops,
                   name_filter, as_json, no_color)


def _gradcheck(target, shape, dtype, device, seed, eps, atol, rtol, fast, max_report, ops,
               name_filter, as_json, no_color) -> None:
    out = make_console(no_color=no_color)
    err = make_console(no_color=no_color, stderr=True)
    ops = ops or (name_filter is not None and target is None)
    try:
        chosen_dtype = parse_dtype(dtype)
        chosen_device = parse_device(device)
        if ops:
            if shape:
                raise TargetError("--shape is for targets; ops are checked on their registry samples")
            selected = select_ops(target, name_filter)
        elif target is None:
            raise TargetError("nothing to check: give a TARGET (file.py, file.py:Name or "
                              "package.module:Name) or --ops")
        elif name_filter is not None:
            raise TargetError("--filter selects ops; use it with --ops")
        else:
            shapes = [parse_shape(text) for text in shape or ()]
            targets = resolve(target)
    except TargetError as error:
        print_error(err, str(error))
        raise typer.Exit(2) from None
    default_atol, default_rtol = default_tolerances(chosen_dtype)
    options = CheckOptions(Tolerances(eps=eps, atol=default_atol if atol is None else atol,
                                      rtol=default_rtol if rtol is None else rtol),
                           fast, max_report, chosen_device)
    notes = []
    if chosen_dtype is not genesis.float64:
        notes.append(f"--dtype {chosen_dtype.name}: the numerical gradient is taken on float64 copies "
                     f"and the analytical one in {chosen_dtype.name}, so expect larger errors; "
                     "float64 gives the most precise check")
        if not as_json:
            print_warning(err, notes[0])
    if ops:
        rows = _sweep_ops(selected, chosen_dtype, seed, options, err)
    else:
        rows = [check_target(item, shapes, chosen_dtype, seed, options) for item in targets]
    raised = list(dict.fromkeys(f"{row.name}: {line}" for row in rows for line in row.warnings))
    if as_json:
        typer.echo(json.dumps(_summary(rows, ops, chosen_dtype, seed, options, notes + raised), indent=2))
    else:
        for line in raised:
            print_warning(err, line)
        _print_report(out, rows, ops, options)
    raise typer.Exit(0 if _all_passed(rows) else 1)


def default_tolerances(dtype) -> tuple:
    """(atol, rtol) where --atol or --rtol is not given: gradcheck's (1e-5, 1e-3), widened to
    torch.testing's for `dtype` where those are wider: bfloat16 rounds the analytical gradient
    to about 3 significant digits, so its rtol is 1.6e-2.

    >>> default_tolerances(genesis.float64), default_tolerances(genesis.bfloat16)
    ((1e-05, 0.001), (1e-05, 0.016))
    """
    atol, rtol = dtype_tolerances(dtype)
    return max(atol, Tolerances.atol), max(rtol, Tolerances.rtol)


# -- targets -------------------------------------------------------------------

def check_target(target, shapes: list, dtype, seed: int, options: CheckOptions) -> Row:
    """Gradcheck one resolved target; its exceptions become an ERROR row."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row, inputs = _check_target(target, shapes, dtype, seed, options)
    # The command has already warned about a --dtype other than float64.
    said = inputs is not None and inputs.random and dtype is not genesis.float64
    row.warnings = _warning_lines(caught, skip_gradcheck_warnings=said)
    return row


def _check_target(target, shapes: list, dtype, seed: int, options: CheckOptions) -> tuple:
    if target.is_function_class and target.obj.surrogate_gradient:
        return Row(target.name, "SKIP", "not checked: " + declared_surrogate(target.obj.__name__)), None
    try:
        inputs = build_inputs(target, shapes, dtype, seed, options.device)
    except TargetError as error:
        return Row(target.name, "ERROR", "inputs could not be built", errors=[("", str(error))]), None
    except Exception as error:
        return Row(target.name, "ERROR", "inputs could not be built",
                   errors=[("", _error_text(error, target))]), None
    output_shapes = []

    def call(*args):
        result = target.function(*args)
        if not output_shapes:
            output_shapes.append(_shapes_of(result))
        return result

    try:
        try:
            result = options.run(call, inputs.args)
        except LeafModifiedInPlaceError:
            # It changes an input in place, which a leaf that requires grad can't take: check it
            # on clones, as `F.apply(x.clone())` in PyTorch, of fresh inputs (its first call
            # changed these).
            inputs = build_inputs(target, shapes, dtype, seed, options.device)
            inputs.description += "; passed as clones (it changes its inputs in place)"
            result = options.run(lambda *args: call(*(_clone(arg) for arg in args)), inputs.args)
    except Exception as error:
        return _error_row(target, inputs, error), inputs
    checked = f"{inputs.description} -> {output_shapes[0]}"
    measured = result.ok or result.failed_check not in UNMEASURED
    status = "PASS" if result.ok else "SKIP" if result.failed_check == "kink" else "FAIL"
    row = Row(target.name, status, checked,
              result.max_abs_error if measured else None,
              result.max_rel_error if measured else None,
              failures=[] if result.ok else [("", result)],
              advice=surrogate_advice(target.obj.__name__)
              if status == "FAIL" and target.is_function_class
              and result.failed_check != "low_precision_forward" else "")
    return row, inputs


def _clone(arg):
    return arg.clone() if isinstance(arg, genesis.Tensor) else arg


def _error_row(target, inputs, error: Exception) -> Row:
    """The ERROR row of a target whose check raised, with a hint about its inputs where the
    error came out of its own code (not where gradcheck refused its outputs or the engine
    refused what its backward returned: other inputs would not help there)."""
    text = _error_text(error, target)
    hint = _input_hint(target, inputs, error) if _raised_in_target(error, target) else ""
    return Row(target.name, "ERROR", inputs.description,
               errors=[("", f"{text}\n{hint}" if hint else text)])


def _input_hint(target, inputs, error: Exception) -> str:
    if isinstance(error, RuntimeError) and "dtype" in str(error):
        return (f"The inputs were {inputs.description}. If {target.name} makes tensors "
                "inside with a dtype of their own (a float32 constant), make them in its "
                "input's dtype (dtype=x.dtype): gradients are checked in float64.")
    if inputs.defaulted and isinstance(error, (ValueError, RuntimeError, IndexError)):
        return (f"The inputs were {inputs.description}. If {target.name} needs other shapes, "
                "pass --shape once per input (e.g. --shape 3,4 --shape 4,5).")
    if inputs.random and isinstance(error, TypeError):
        return (f"The inputs were {inputs.description}. If an input of {target.name} is not "
                "a tensor, annotate it (one annotated int, float or bool gets a made-up "
                "value) or give it a gradcheck_inputs() that returns its inputs.")
    return ""


# Failed checks that compare no gradients, or none that a difference says anything about
# (at a kink), so measure no error: the table shows "-" there.
UNMEASURED = {"non_finite_input", "nondeterministic", "grad_shape", "kink"}


def _shapes_of(result) -> str:
    values = result if isinstance(result, (tuple, list)) else (result,)
    return ", ".join(str(tuple(v.shape)) if isinstance(v, genesis.Tensor) else type(v).__name__
                     for v in values)


def _error_text(error: Exception, target=None) -> str:
    text = f"{type(error).__name__}: {error}"
    where = _raised_in_target(error, target) if target is not None else None
    return f"{text}\n(raised at {where})" if where else text


def _raised_in_target(error: Exception, target) -> str | None:
    """`file:line in function` of the innermost frame in the target's own source file."""
    try:
        source = inspect.getsourcefile(target.obj)
    except TypeError:
        return None
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == source]
    return f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else None


# -- ops -----------------------------------------------------------------------

def select_ops(names: str | None, name_filter: str | None) -> list:
    """The registry entries named in `names` (comma-separated; all when None) whose name
    contains `name_filter`; a TargetError for unknown names or an empty selection."""
    registry = all_ops()
    if names:
        by_name = {info.name: info for info in registry}
        wanted = [name.strip() for name in names.split(",") if name.strip()]
        for name in wanted:
            if name not in by_name:
                close = difflib.get_close_matches(name, by_name, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else "; --ops alone lists every op"
                raise TargetError(f"no op named {name!r} in the registry{hint}")
        registry = [by_name[name] for name in dict.fromkeys(wanted)]
    if name_filter is not None:
        registry = [info for info in registry if name_filter in info.name]
        if not registry:
            raise TargetError(f"no op name contains {name_filter!r}")
    return registry


def _sweep_ops(selected: list, dtype, seed: int, options: CheckOptions, console) -> list:
    rows = []
    with progress(console, "checking ops", len(selected)) as advance:
        for info in selected:
            rows.append(check_op(info, dtype, seed, options))
            advance(info.name)
    return rows


def check_op(info, dtype, seed: int, options: CheckOptions) -> Row:
    """Gradcheck every sample of a registry entry; one row with the worst errors."""
    if not info.differentiable:
        return Row(info.name, "SKIP", "not differentiable")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = _check_samples(info, dtype, seed, options)
    row.warnings = _warning_lines(caught, skip_gradcheck_warnings=dtype is not genesis.float64)
    return row


def _check_samples(info, dtype, seed: int, options: CheckOptions) -> Row:
    samples = info.samples(np.random.default_rng(seed))
    row = Row(info.name, "PASS", "", 0.0, 0.0)
    checked = 0
    for index, sample in enumerate(samples):
        args, kwargs = sample.tensors(dtype, None if options.device.type == "cpu" else options.device)
        if not any(isinstance(arg, genesis.Tensor) and arg.requires_grad for arg in args):
            continue
        checked += 1
        where = f"sample {index} ({sample.note})" if sample.note else f"sample {index}"
        try:
            result = options.run(_op_call(info, kwargs), args)
        except Exception as error:
            row.errors.append((where, _error_text(error)))
            continue
        row.max_abs_error = max(row.max_abs_error, result.max_abs_error)
        row.max_rel_error = max(row.max_rel_error, result.max_rel_error)
        if not result.ok:
            row.failures.append((where, result))
    without_grad = len(samples) - checked
    row.checked = (f"{checked} sample{'s' if checked != 1 else ''}, {dtype.name}"
                   f"{_on(options.device)}"
                   + (f" ({without_grad} more with no input requiring grad)" if without_grad else ""))
    row.status = "ERROR" if row.errors else "FAIL" if row.failures else "PASS" if checked else "SKIP"
    return row


def _op_call(info, kwargs: dict):
    def call(*args):
        result = info.call(*args, **kwargs)
        if isinstance(result, genesis.Tensor):
            return result
        return tuple(value for value in result if isinstance(value, genesis.Tensor))
    return call


# -- output --------------------------------------------------------------------

def _warning_lines(caught: list, skip_gradcheck_warnings: bool) -> list:
    """The warnings caught during one check, once each."""
    lines = []
    for warning in caught:
        gradcheck_warning = issubclass(warning.category, GradcheckWarning)
        if gradcheck_warning and skip_gradcheck_warnings:
            continue
        line = str(warning.message) if gradcheck_warning else f"{warning.category.__name__}: {warning.message}"
        if line not in lines:
            lines.append(line)
    return lines


def _print_report(console, rows: list, ops: bool, options: CheckOptions) -> None:
    table = new_table("op" if ops else "target", ("result", "center"), ("max abs error", "right"),
                      ("max rel error", "right"), "checked" if ops else "checked (inputs -> outputs)")
    for row in rows:
        table.add_row(row.name, status_text(row.status), _number(row.max_abs_error),
                      _number(row.max_rel_error), row.checked)
    console.print(table)
    for row in rows:
        for where, text in row.errors:
            _heading(console, "ERROR", row.name, where)
            console.print(text, markup=False, soft_wrap=True)
        if row.failures:   # the first failing sample in full, the others by name
            where, result = row.failures[0]
            _heading(console, "SKIP" if row.status == "SKIP" else "FAIL", row.name, where)
            console.print(format_report(result), markup=False, soft_wrap=True)
            if row.advice:
                console.print("  " + row.advice, markup=False, soft_wrap=True)
            if len(row.failures) > 1:
                console.print("also failing: " + ", ".join(other for other, _ in row.failures[1:]),
                              markup=False)
    verdicts = ", ".join(f"{count} {word}" for count, word in
                         zip(_counts(rows).values(), ("passed", "failed", "raised", "skipped")) if count)
    tol = options.tolerances
    console.print()
    noun = ("op" if ops else "target") + ("" if len(rows) == 1 else "s")
    console.print(f"{len(rows)} {noun}: {verdicts}. Tolerances: eps={tol.eps:g}, "
                  f"atol={tol.atol:g}, rtol={tol.rtol:g}" + (", fast mode" if options.fast else ""),
                  markup=False)


def _heading(console, status: str, name: str, where: str) -> None:
    console.print()
    title = status_text(status)
    title.append(f"  {name}" + (f", {where}" if where else ""), style="bold")
    console.print(title)


def _counts(rows: list) -> dict:
    return {status: sum(1 for row in rows if row.status == status)
            for status in ("PASS", "FAIL", "ERROR", "SKIP")}


def _all_passed(rows: list) -> bool:
    return all(row.status in ("PASS", "SKIP") for row in rows)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def _summary(rows: list, ops: bool, dtype, seed: int, options: CheckOptions, notes: list) -> dict:
    tol = options.tolerances
    return {
        "ok": _all_passed(rows),
        "mode": "ops" if ops else "targets",
        "dtype": dtype.name, "device": str(options.device), "seed": seed, "fast": options.fast,
        "tolerances": {"eps": tol.eps, "atol": tol.atol, "rtol": tol.rtol},
        "counts": _counts(rows),
        "warnings": notes,
        "results": [{"name": row.name, "status": row.status, "checked": row.checked,
                     "max_abs_error": _finite(row.max_abs_error),
                     "max_rel_error": _finite(row.max_rel_error),
                     "failures": [_failure(where, result) for where, result in row.failures],
                     "advice": row.advice or None,
                     "errors": [{"where": where or None, "message": text} for where, text in row.errors]}
                    for row in rows],
    }


def _failure(where: str, result: GradcheckResult) -> dict:
    return {"where": where or None, "failed_check": result.failed_check,
            "title": CHECKS[result.failed_check][0],
            "output_index": result.output_index, "input_index": result.input_index,
            "max_abs_error": _finite(result.max_abs_error), "max_rel_error": _finite(result.max_rel_error),
            "failing_entries": result.failing_entries, "total_entries": result.total_entries,
            "worst": [{"input_position": list(entry.input_position),
                       "output_position": None if entry.output_position is None
                       else list(entry.output_position),
                       "analytical": _finite(entry.analytical), "numerical": _finite(entry.numerical),
                       "abs_error": _finite(entry.abs_error)} for entry in result.worst],
            "report": format_report(result)}


def _finite(value: float | None) -> float | None:
    """JSON has no NaN or Infinity: those become null (the report text still names them)."""
    return None if value is None or not np.isfinite(value) else float(value)
