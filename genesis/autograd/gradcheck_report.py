"""What a gradient check found, as data (`GradcheckResult`) and as a readable report.

`format_report` is the one place a result becomes text; `gradcheck` raises it
and the CLI prints it.

>>> result = GradcheckResult(ok=False, failed_check="values", output_index=0, input_index=0,
...     output=TensorSummary((2,), "float64"), input=TensorSummary((2,), "float64"),
...     max_abs_error=0.5, max_rel_error=0.25, failing_entries=1, total_entries=4,
...     worst=[Mismatch((1,), (1,), 2.5, 2.0, 0.5)])
>>> print(format_report(result).splitlines()[0])
gradcheck failed: analytical and numerical gradients differ
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GradcheckResult", "Mismatch", "TensorSummary", "Tolerances", "CHECKS", "format_report"]

# failed_check -> (title, what it means and what to do)
CHECKS = {
    "non_finite_input": (
        "an input holds NaN or Inf",
        "Finite differences are undefined at NaN and ±inf, so gradcheck needs the inputs that "
        "require grad to be finite: check them at points where the function is defined."),
    "nondeterministic": (
        "the function is nondeterministic",
        "Two forward runs on the same inputs gave different outputs (random numbers inside, "
        "such as dropout?), so finite differences measure noise, not the gradient. Fix the "
        "randomness (seed it inside the function, or check with it turned off)."),
    "forward_ad": (
        "Jacobian computed with forward mode mismatch",
        "The tangents that forward-mode AD gives (one unit tangent per input element) disagree "
        "with central finite differences: check the custom Function's jvp."),
    "undefined_tangent": (
        "forward mode: an undefined tangent is not treated as zero",
        "With one input's tangent zero, and with no tangent for it at all, the function's output "
        "tangents must be the same: check the custom Function's jvp for inputs whose tangent is "
        "None. Pass check_undefined_grad=False to skip this check."),
    "batched_forward_grad": (
        "forward mode: the jvp cannot be batched",
        "Batching tangents (vmap over jvp) needs a jvp that is linear in the tangent and draws "
        "no random numbers. Pass check_batched_forward_grad=False to skip this check."),
    "values": (
        "analytical and numerical gradients differ",
        "The backward formula disagrees with central finite differences. Check the derivative "
        "in backward; near a kink (relu or abs at 0, max with ties) move the inputs away from it."),
    "low_precision_forward": (
        "the forward computes at lower precision than its inputs' dtype",
        "Its outputs are rounded to a narrower dtype than its inputs' (a .float() or a float32 "
        "constant inside?), so central finite differences measure that rounding, not the "
        "derivative: in this dtype the comparison is not meaningful and says nothing about the "
        "backward. Compute the forward in its inputs' dtype to check the backward."),
    "kink": (
        "not differentiable here",
        "The entries out of tolerance sit on a kink (relu or abs at 0, max with ties): the "
        "one-sided finite differences disagree there and the backward's value lies between "
        "them, a valid sub-gradient, so finite differences can't check it. Move the inputs away "
        "from the kink to check the backward."),
    "expected_zero": (
        "gradient expected to be zero",
        "Numerically the output does not change with this input, but backward returned a "
        "non-zero gradient for it."),
    "missing_gradient": (
        "gradient missing",
        "Numerical gradient for function expected to be zero (autograd gives none), but "
        "numerically the output changes with this input: autograd found no path from the "
        "output back to it (a detach(), a no_grad block, or math done outside the graph?)."),
    "reentrant": (
        "Backward is not reentrant",
        "Two backward runs with the same grad_outputs gave different results. Backward must be "
        "deterministic; pass nondet_tol= if small run-to-run differences are expected."),
    "grad_shape": (
        "gradient of wrong shape or dtype",
        "A backward must return, for each input, a floating gradient of the input's shape "
        "(or of a shape the input was broadcast to)."),
    "undefined_grad": (
        "undefined output gradient not treated as zero",
        "Backward ran with a zero gradient for the output and no (None) gradient for its "
        "sibling outputs; every input gradient must then be None or zero. With "
        "ctx.set_materialize_grads(False) backward receives None and must handle it. "
        "Pass check_undefined_grad=False to skip this check."),
    "batched_grad": (
        "backward is not linear in its grad_outputs",
        "vjp(a*v1 + b*v2) must equal a*vjp(v1) + b*vjp(v2): batching several grad_outputs "
        "relies on it. Does backward square, offset or clamp the incoming gradient?"),
}

# Column titles of the entries table for the checks whose two columns are not
# "analytical vs numerical".
_COLUMNS = {
    "reentrant": ("first run", "second run"),
    "batched_grad": ("vjp(a*v1+b*v2)", "a*vjp(v1)+b*vjp(v2)"),
}


@dataclass(frozen=True)
class Tolerances:
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    nondet_tol: float = 0.0


@dataclass(frozen=True)
class TensorSummary:
    shape: tuple
    dtype: str

    def __str__(self) -> str:
        return f"shape {self.shape}, {self.dtype}"


@dataclass(frozen=True)
class Mismatch:
    """One Jacobian entry out of tolerance: d output[output_position] / d input[input_position]."""

    input_position: tuple
    output_position: tuple | None  # None where the entry is not tied to one output element
    analytical: float
    numerical: float
    abs_error: float


@dataclass
class GradcheckResult:
    """The outcome of `check_gradients`; `failed_check` is a key of `CHECKS` or None."""

    ok: bool
    failed_check: str | None = None
    output_index: int | None = None
    input_index: int | None = None
    output: TensorSummary | None = None
    input: TensorSummary | None = None
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    failing_entries: int = 0
    total_entries: int = 0
    worst: list = field(default_factory=list)
    tolerances: Tolerances = field(default_factory=Tolerances)
    detail: str = ""
    also_failing: list = field(default_factory=list)  # other (output_index, input_index) pairs
    check_name: str = "gradcheck"
    fast_mode: bool = False

    def __bool__(self) -> bool:
        return self.ok


def format_report(result: GradcheckResult) -> str:
    """The result as text: which check failed, where, by how much, and the worst entries."""
    if result.ok:
        mode = "fast mode, " if result.fast_mode else ""
        return (f"{result.check_name} passed ({mode}max abs error {result.max_abs_error:.3g}, "
                f"max rel error {result.max_rel_error:.3g})")
    title, explanation = CHECKS[result.failed_check]
    settled = "can't check the gradient" if result.failed_check == "kink" else "failed"
    lines = [f"{result.check_name} {settled}: {title}"]
    where = _where(result)
    if where:
        lines.append(f"  {where}")
    if result.detail:
        lines.extend(f"  {line}" for line in result.detail.splitlines())
    tol = result.tolerances
    if result.failed_check == "reentrant":
        lines.append(f"  tolerance: nondet_tol={tol.nondet_tol:g} (an entry fails when the runs differ "
                     "by more than that)")
    elif result.total_entries:
        second = _COLUMNS.get(result.failed_check, ("", "numerical"))[1]
        lines.append(f"  tolerances: atol={tol.atol:g}, rtol={tol.rtol:g}, eps={tol.eps:g} (an entry "
                     f"fails when the difference exceeds atol + rtol * |{second}|)")
    if result.total_entries:
        lines.append(f"  max abs error {result.max_abs_error:.6g}, max rel error "
                     f"{result.max_rel_error:.6g}; {result.failing_entries} of "
                     f"{result.total_entries} entr{'ies' if result.total_entries != 1 else 'y'} "
                     "out of tolerance")
    if result.worst:
        lines.extend(_entries_table(result))
    if result.also_failing:
        pairs = ", ".join(f"output {o} w.r.t. input {i}" for o, i in result.also_failing)
        lines.append(f"  also failing: {pairs}")
    lines.append(f"  {explanation}")
    return "\n".join(lines)


# The checks that compare Jacobians: their report names the pair as PyTorch's does.
_JACOBIAN_CHECKS = {"values", "expected_zero", "missing_gradient", "low_precision_forward"}


def _where(result: GradcheckResult) -> str:
    if result.failed_check in _JACOBIAN_CHECKS and result.output_index is not None \
            and result.input_index is not None:
        return (f"Jacobian mismatch for output {result.output_index} with respect to input "
                f"{result.input_index} (output: {result.output}; input: {result.input})")
    parts = []
    if result.output_index is not None:
        parts.append(f"output {result.output_index} ({result.output})")
    if result.input_index is not None:
        parts.append(f"input {result.input_index} ({result.input})")
    return " with respect to ".join(parts)


def _entries_table(result: GradcheckResult) -> list:
    first, second = _COLUMNS.get(result.failed_check, ("analytical", "numerical"))
    rows = [("input index", "output index", first, second, "abs error")]
    for entry in result.worst:
        rows.append((_position(entry.input_position), _position(entry.output_position),
                     f"{entry.analytical:.6g}", f"{entry.numerical:.6g}", f"{entry.abs_error:.3g}"))
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    shown = len(result.worst)
    heading = (f"worst {shown} entries:" if shown != 1 else "worst entry:") \
        if result.failing_entries > shown else "entries out of tolerance:"
    lines = [f"  {heading}"]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(row[2:], widths[2:])]
        lines.append("    " + "   ".join(cells).rstrip())
    return lines


def _position(position: tuple | None) -> str:
    if position is None:
        return "-"
    return "(" + ", ".join(str(index) for index in position) + ("," if len(position) == 1 else "") + ")"
