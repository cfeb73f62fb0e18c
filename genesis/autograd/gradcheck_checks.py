"""The checks behind `gradcheck`, each turning a problem into a `GradcheckResult`.

A problem (see `gradcheck._Problem`) gives the inputs that require grad, the
floating outputs with their graph, and `evaluate()` for the numerical side.

- `non_finite_inputs`: the inputs that require grad and hold NaN or ±inf, where finite
  differences are undefined; a check that fails on them is `blamed_on_inputs` (one that
  passes, like fmax ignoring a NaN or softmax a -inf, passes).
- `deterministic_forward_check`: two forward runs on the same inputs agree (random
  numbers inside make every finite difference noise).
- `slow_check`: whole Jacobians, entry by entry, after a reentrancy check; entries out of
  tolerance only where the function has a kink (`gradcheck_kinks`) fail as "kink", not as a
  wrong gradient, and those of a forward that rounds to a narrower dtype than its inputs'
  (`gradcheck_precision`) as "low_precision_forward".
- `fast_check`: one projection v^T J u per (output, input) pair; the exact
  check decides (and gives the table) when it finds a problem.
- `undefined_grad_check`: undefined (None) or zero output gradients give None or zero
  input gradients.
- `linearity_check`: backward is linear in its grad_outputs (what batching needs).
"""
from __future__ import annotations

import warnings

import numpy as np

from .gradcheck_jacobians import (WrongGradientLayout, analytical_rows, flat_values,
                                  numerical_jacobians, numerical_projections, vjp_arrays)
from .gradcheck_kinks import kink_entries
from .gradcheck_precision import rounded_to
from .gradcheck_report import GradcheckResult, Mismatch, Tolerances
from .gradcheck_undefined import undefined_backward_failure

__all__ = ["non_finite_inputs", "blamed_on_inputs", "deterministic_forward_check", "slow_check", "fast_check",
           "undefined_grad_check", "linearity_check"]

MAX_POSITIONS = 5  # non-finite entries named per input


def non_finite_inputs(args: tuple, input_indices: list) -> list:
    """One line per input that requires grad and holds NaN/±inf: how many, and where."""
    lines = []
    for index in input_indices:
        values = flat_values(args[index])
        bad = ~np.isfinite(values)
        if not bad.any():
            continue
        shape = tuple(args[index].shape)
        counts = [f"{int(count)} {word}" for word, count in
                  (("NaN", np.isnan(values).sum()), ("Inf", np.isinf(values).sum())) if count]
        (flat,) = np.nonzero(bad)
        positions = ", ".join(str(_position(k, shape)) for k in flat[:MAX_POSITIONS])
        more = f" and {flat.size - MAX_POSITIONS} more" if flat.size > MAX_POSITIONS else ""
        lines.append(f"input {index} (shape {shape}) holds {' and '.join(counts)} at "
                     f"{positions}{more}: gradcheck needs finite inputs")
    return lines


def blamed_on_inputs(failed: GradcheckResult, lines: list) -> GradcheckResult:
    """`failed` told as what it is: a check that failed on inputs holding NaN/±inf (named by
    `lines`), where finite differences are undefined, so it settles nothing."""
    return GradcheckResult(ok=False, failed_check="non_finite_input", tolerances=failed.tolerances,
                           detail="\n".join(lines + ["the check failed on them, which says "
                                                      "nothing about the backward"]))


def deterministic_forward_check(problem, tol: Tolerances) -> GradcheckResult | None:
    """A failed result when two forward runs on the same inputs differ by more than
    `nondet_tol` (random numbers inside the function), else None."""
    first, second = problem.evaluate(), problem.evaluate()
    for i, (one, two) in enumerate(zip(first, second)):
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are compared by ==
            difference = np.where(one == two, 0.0, np.abs(one - two))
        differs = ~(difference <= tol.nondet_tol) & ~(np.isnan(one) & np.isnan(two))
        if differs.any():
            return GradcheckResult(
                ok=False, failed_check="nondeterministic", tolerances=tol,
                detail=f"{int(differs.sum())} of {one.size} value{'s' if one.size != 1 else ''} "
                       f"of output "
                       f"{problem.output_indices[i]} differ between two runs on the same inputs "
                       f"(by up to {float(np.nan_to_num(difference, nan=np.inf).max()):.3g})",
                **problem.summary(i, None))
    return None


def slow_check(problem, tol: Tolerances, max_report: int) -> GradcheckResult:
    """Whole Jacobians: reentrancy first, then every (output, input) pair entry by entry."""
    numerical = numerical_jacobians(problem.evaluate, problem.numeric_inputs, tol.eps,
                                    [output._data.size for output in problem.outputs])
    analytical = []
    differentiable = problem.differentiable_outputs()
    for output in problem.outputs:
        if output._requires_grad:
            analytical.append(analytical_rows(differentiable, _index_of(differentiable, output),
                                              problem.inputs))
        else:
            zeros = [np.zeros((output._data.size, t._data.size)) for t in problem.inputs]
            analytical.append((zeros, zeros, [False] * len(problem.inputs)))
    for i, (first, second, _) in enumerate(analytical):
        for j in range(len(problem.inputs)):
            if not _same_run(first[j], second[j], tol.nondet_tol):
                return _reentrant_result(problem, tol, max_report, i, j, first[j], second[j])
    failures = []
    largest_abs = largest_rel = 0.0
    for i, (first, _, connected) in enumerate(analytical):
        for j in range(len(problem.inputs)):
            result = _compare(problem, tol, max_report, i, j, first[j], numerical[i][j], connected[j])
            largest_abs = max(largest_abs, result.max_abs_error)
            largest_rel = max(largest_rel, result.max_rel_error)
            if not result.ok:
                failures.append(result)
    if failures:  # a wrong gradient before a kink
        failures = [f for f in failures if f.failed_check != "kink"] or failures
        failures[0].also_failing = [(f.output_index, f.input_index) for f in failures[1:]]
        return failures[0]
    return GradcheckResult(ok=True, max_abs_error=largest_abs, max_rel_error=largest_rel,
                           tolerances=tol)


def _compare(problem, tol, max_report, i, j, analytical, numerical, connected) -> GradcheckResult:
    error = np.abs(analytical - numerical)
    failing = ~(error <= tol.atol + tol.rtol * np.abs(numerical))
    measured = dict(tolerances=tol, max_abs_error=float(error.max(initial=0.0)),
                    max_rel_error=float(_relative_error(error, numerical, tol.atol).max(initial=0.0)),
                    failing_entries=int(failing.sum()), total_entries=int(error.size))
    if not failing.any():
        return GradcheckResult(ok=True, **measured)
    output, wide = problem.outputs[i], problem.inputs[j]
    narrow = rounded_to(flat_values(output), flat_values(wide), error[failing], tol.eps)
    if narrow is not None:
        worst = _worst_entries(problem, i, j, analytical, numerical, error, failing, max_report)
        detail = (f"(every value of output {problem.output_indices[i]} is exactly a {narrow} "
                  f"value, while input {problem.input_indices[j]} is {wide.dtype.name}: the "
                  f"forward rounds to {narrow} precision, and the errors are the size of that "
                  f"rounding over a step of eps={tol.eps:g})")
        return GradcheckResult(ok=False, failed_check="low_precision_forward", worst=worst,
                               detail=detail, **measured, **problem.summary(i, j))
    on_kink = kink_entries(problem, i, j, analytical, failing, tol)
    if not (failing & ~on_kink).any():
        worst = _worst_entries(problem, i, j, analytical, numerical, error, failing, max_report)
        return GradcheckResult(ok=False, failed_check="kink", worst=worst, **measured,
                               **problem.summary(i, j))
    kinks = int(on_kink.sum())
    failing &= ~on_kink
    measured["failing_entries"] = int(failing.sum())
    sit = "entry out of tolerance sits" if kinks == 1 else "entries out of tolerance sit"
    detail = f"({kinks} more {sit} on a kink, where the backward's value is a valid " \
             "sub-gradient: not counted)" if kinks else ""
    if not connected:
        check = "missing_gradient"
    elif np.all(np.abs(numerical) <= tol.atol):
        check = "expected_zero"
    else:
        check = "values"
    worst = _worst_entries(problem, i, j, analytical, numerical, error, failing, max_report)
    return GradcheckResult(ok=False, failed_check=check, worst=worst, detail=detail, **measured,
                           **problem.summary(i, j))


def _reentrant_result(problem, tol, max_report, i, j, first, second) -> GradcheckResult:
    with np.errstate(invalid="ignore"):
        difference = np.abs(first - second)
    failing = _differ(first, second, tol.nondet_tol)
    result = GradcheckResult(ok=False, failed_check="reentrant", tolerances=tol,
                             max_abs_error=float(difference.max()),
                             max_rel_error=float(_relative_error(difference, second, tol.atol).max()),
                             failing_entries=int(failing.sum()), total_entries=int(difference.size),
                             **problem.summary(i, j))
    result.worst = _worst_entries(problem, i, j, first, second, difference, failing, max_report)
    return result


def _relative_error(error: np.ndarray, reference: np.ndarray, floor: float) -> np.ndarray:
    """|error| / |reference|, with the reference floored at `floor` (atol): a 1e-17 slip
    against an exact 0 is not an infinite relative error. With atol 0, no error against an
    exact 0 is a relative error of 0, and an error against it is inf.

    >>> _relative_error(np.array([0.0, 1e-3]), np.array([0.0, 0.0]), 0.0)
    array([ 0., inf])
    """
    reference = np.maximum(np.abs(reference), floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(error == 0, 0.0, error / reference)


def _worst_entries(problem, i, j, first, second, error, failing, max_report) -> list:
    """The failing entries with the largest error (NaN first), as `Mismatch`es."""
    rows, columns = np.nonzero(failing)
    order = np.argsort(-np.nan_to_num(error[rows, columns], nan=np.inf), kind="stable")[:max_report]
    output_shape = tuple(problem.outputs[i].shape)
    input_shape = tuple(problem.inputs[j].shape)
    return [Mismatch(_position(columns[k], input_shape), _position(rows[k], output_shape),
                     float(first[rows[k], columns[k]]), float(second[rows[k], columns[k]]),
                     float(error[rows[k], columns[k]])) for k in order]


def _position(flat, shape: tuple) -> tuple:
    return tuple(int(index) for index in np.unravel_index(flat, shape))


def fast_check(problem, tol: Tolerances, max_report: int) -> GradcheckResult:
    """Compare v^T J u per pair for random unit u (input side) and v (output side).

    The tolerance is the slow check's, summed over the entries the projection
    mixes: atol * sum|u| * sum|v| + rtol * |numerical|.
    """
    rng = np.random.default_rng(0)
    directions = [_unit_vector(rng, tensor._data.size) for tensor in problem.inputs]
    weights = [_unit_vector(rng, output._data.size) for output in problem.outputs]
    # v is fed to backward in the output's dtype: use exactly those values on both sides
    weights = [w.astype(output._data.dtype).astype(np.float64) for w, output in zip(weights, problem.outputs)]
    numerical = numerical_projections(problem.evaluate, problem.numeric_inputs, directions, weights, tol.eps)
    differentiable = problem.differentiable_outputs()
    largest_abs = largest_rel = 0.0
    for i, (output, weight) in enumerate(zip(problem.outputs, weights)):
        first = second = [None] * len(problem.inputs)
        if output._requires_grad:
            seeds = [weight if other is output else np.zeros(other._data.size) for other in differentiable]
            first = vjp_arrays(differentiable, problem.inputs, seeds)
            second = vjp_arrays(differentiable, problem.inputs, seeds)
        for j, direction in enumerate(directions):
            if not _same_run(first[j], second[j], tol.nondet_tol):
                return _confirmed(problem, tol, max_report, "two backward runs with v differ")
            analytical = 0.0 if first[j] is None else float(first[j] @ direction)
            error = abs(analytical - numerical[i, j])
            spread = np.abs(direction).sum() * np.abs(weight).sum()
            bound = tol.atol * spread + tol.rtol * abs(numerical[i, j])
            if not error <= bound:
                return _confirmed(problem, tol, max_report,
                                  f"v^T J u for output {problem.output_indices[i]} and input "
                                  f"{problem.input_indices[j]}: analytical {analytical:.6g}, "
                                  f"numerical {numerical[i, j]:.6g}")
            largest_abs = max(largest_abs, error)
            largest_rel = max(largest_rel, float(_relative_error(np.array(error), np.array(numerical[i, j]), tol.atol)))
    return GradcheckResult(ok=True, max_abs_error=largest_abs, max_rel_error=largest_rel,
                           tolerances=tol, fast_mode=True)


def _confirmed(problem, tol, max_report, finding: str) -> GradcheckResult:
    """Fast mode found a problem: the exact check decides, and gives the entries table."""
    result = slow_check(problem, tol, max_report)
    if not result.ok:
        result.detail = f"fast mode found it ({finding}); the exact check confirms:"
    return result


def _index_of(items: list, item) -> int:
    return next(index for index, candidate in enumerate(items) if candidate is item)


def _same_run(first, second, nondet_tol: float) -> bool:
    """Whether two backward runs agree within `nondet_tol`."""
    if first is None or second is None:
        return first is None and second is None
    return not _differ(first, second, nondet_tol).any()


def _differ(first: np.ndarray, second: np.ndarray, nondet_tol: float) -> np.ndarray:
    """Where two runs differ by more than `nondet_tol` (the same NaN or infinity in both runs
    is no run-to-run variation)."""
    with np.errstate(invalid="ignore"):
        close = np.abs(first - second) <= nondet_tol
    return ~(close | (first == second) | (np.isnan(first) & np.isnan(second)))


def _unit_vector(rng, size: int) -> np.ndarray:
    vector = rng.standard_normal(size)
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def undefined_grad_check(problem, passed: GradcheckResult) -> GradcheckResult:
    """A backward with every output's gradient undefined (see `gradcheck_undefined`), then one
    with each output's gradient zero (its siblings' undefined), gives None or zero gradients.
    A failure also warns, with PyTorch's words, that this check is on by default."""
    result = _undefined_grad_result(problem, passed)
    if not result.ok:
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                      "enabled by default, but it may break existing callers of this function; call "
                      "it with check_undefined_grad=False to disable the feature", UserWarning,
                      stacklevel=4)
    return result


def _undefined_grad_result(problem, passed: GradcheckResult) -> GradcheckResult:
    failure = undefined_backward_failure(problem.differentiable_outputs())
    if failure is not None:
        return GradcheckResult(ok=False, failed_check="undefined_grad", tolerances=passed.tolerances,
                               detail=failure)
    for i, output in enumerate(problem.outputs):
        if not output._requires_grad:
            continue
        try:
            grads = vjp_arrays([output], problem.inputs, [np.zeros(output._data.size)])
        except WrongGradientLayout:
            raise
        except RuntimeError as error:  # the backward could not cope with a missing gradient
            notes = "".join(f"\n{note}" for note in getattr(error, "__notes__", ()))
            return GradcheckResult(ok=False, failed_check="undefined_grad", tolerances=passed.tolerances,
                                   detail="Expected backward function to handle undefined output "
                                          f"grads: backward raised {type(error).__name__}: {error}{notes}",
                                   **problem.summary(i, None))
        except Exception as error:  # a bug in the code run: raised as it is (as PyTorch does)
            error.add_note("(raised in gradcheck's undefined-gradient check, which runs backward with "
                           "one output's gradient zero and the others undefined (None); pass "
                           "check_undefined_grad=False to skip it)")
            raise
        for j, values in enumerate(grads):
            if values is not None and np.any(values != 0):
                return GradcheckResult(
                    ok=False, failed_check="undefined_grad", tolerances=passed.tolerances,
                    detail=f"the gradient for this input has non-zero entries (max |g| = "
                           f"{np.abs(values).max():.6g}) although the output gradient was zero",
                    **problem.summary(i, j))
    return passed


_LINEAR_COEFFICIENTS = (0.75, -1.25)


def linearity_check(problem, tol: Tolerances, max_report: int,
                     passed: GradcheckResult) -> GradcheckResult:
    """vjp(a*v1 + b*v2) == a*vjp(v1) + b*vjp(v2): what a batched backward relies on."""
    rng = np.random.default_rng(1)
    a, b = _LINEAR_COEFFICIENTS
    for i, output in enumerate(problem.outputs):
        if not output._requires_grad:
            continue
        dtype = output._data.dtype
        v1, v2 = (rng.standard_normal(output._data.size).astype(dtype).astype(np.float64)
                  for _ in range(2))
        separate = zip(vjp_arrays([output], problem.inputs, [v1]), vjp_arrays([output], problem.inputs, [v2]))
        combined = vjp_arrays([output], problem.inputs, [a * v1 + b * v2])
        for j, ((g1, g2), together) in enumerate(zip(separate, combined)):
            size = problem.inputs[j]._data.size
            expected = a * _or_zeros(g1, size) + b * _or_zeros(g2, size)
            together = _or_zeros(together, size)
            error = np.abs(together - expected)
            failing = ~(error <= tol.atol + tol.rtol * np.abs(expected))
            if failing.any():
                result = GradcheckResult(
                    ok=False, failed_check="batched_grad", tolerances=tol,
                    max_abs_error=float(error.max()),
                    max_rel_error=float(_relative_error(error, expected, tol.atol).max()),
                    failing_entries=int(failing.sum()), total_entries=size,
                    detail=f"a={a}, b={b}, v1 and v2 random", **problem.summary(i, j))
                (positions,) = np.nonzero(failing)
                order = np.argsort(-np.nan_to_num(error[positions], nan=np.inf), kind="stable")
                shape = tuple(problem.inputs[j].shape)
                result.worst = [Mismatch(_position(k, shape), None, float(together[k]),
                                         float(expected[k]), float(error[k]))
                                for k in positions[order[:max_report]]]
                return result
    return passed


def _or_zeros(values, size: int) -> np.ndarray:
    return np.zeros(size) if values is None else values
