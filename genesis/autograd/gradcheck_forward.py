"""The forward-mode checks of `gradcheck` beyond the Jacobian (`check_forward_ad=True`):

- `undefined_tangent_check` (with `check_undefined_grad`): for each input that requires grad,
  the function's output tangents are the same whether that input has a zero tangent or none
  at all (a plain tensor), the other inputs keeping random tangents.
- `batched_forward_check` (with `check_batched_forward_grad`): what vmap over tangents needs.
  genesis has no batching rules, so it checks the two properties a batched jvp relies on:
  the jvp is linear in the tangent (jvp(a*t1 + b*t2) == a*jvp(t1) + b*jvp(t2)) and draws no
  random numbers from a global generator (PyTorch's vmap refuses random operations).

Each takes gradcheck's problem (`gradcheck._Problem`) and returns a `GradcheckResult`.
"""
from __future__ import annotations

import numpy as np

from ..random import device_state, restore_device_state
from ..tensor import Tensor, wrap_array
from . import forward_ad
from .gradcheck_jacobians import flat_values
from .gradcheck_report import GradcheckResult, Tolerances

__all__ = ["undefined_tangent_check", "batched_forward_check"]

_LINEAR_COEFFICIENTS = (0.75, -1.25)


def _tangent_like(tensor: Tensor, values: np.ndarray) -> Tensor:
    xp = tensor._device.xp
    return wrap_array(xp.asarray(values.reshape(tensor._data.shape), dtype=tensor._data.dtype),
                      tensor._device)


def _output_tangents(problem, args: list) -> list:
    """The tangent of each floating output of `func(*args)` as a flat float64 array, or None."""
    result = problem.func(*args)
    outputs = (result,) if isinstance(result, Tensor) else tuple(result)
    tangents = []
    for index in problem.output_indices:
        tangent = forward_ad.unpack_dual(outputs[index]).tangent
        tangents.append(None if tangent is None else flat_values(tangent))
    return tangents


def undefined_tangent_check(problem, tol: Tolerances) -> GradcheckResult:
    """Output tangents agree when an input's tangent is zero and when it has none."""
    rng = np.random.default_rng(2)
    plain = [arg.detach() if isinstance(arg, Tensor) else arg for arg in problem.args]
    with forward_ad.dual_level():
        duals = list(plain)
        for index in problem.input_indices:
            tangent = rng.standard_normal(plain[index]._data.size)
            duals[index] = forward_ad.make_dual(plain[index], _tangent_like(plain[index], tangent))
        for index in problem.input_indices:
            kept = duals[index]
            zero = _tangent_like(plain[index], np.zeros(plain[index]._data.size))
            duals[index] = forward_ad.make_dual(plain[index], zero)
            with_zero = _output_tangents(problem, duals)
            duals[index] = plain[index]
            without = _output_tangents(problem, duals)
            duals[index] = kept
            for k, (first, second) in enumerate(zip(with_zero, without)):
                if first is None or second is None or np.allclose(first, second, equal_nan=True):
                    continue
                return GradcheckResult(
                    ok=False, failed_check="undefined_tangent", tolerances=tol,
                    detail=(f"Mismatch in tangent values for output with index: "
                            f"{problem.output_indices[k]} when input {index} has an undefined "
                            f"tangent value: with a zero tangent for it, max |tangent| "
                            f"{np.abs(first).max():.6g}; with none, {np.abs(second).max():.6g} "
                            f"(max difference {np.abs(first - second).max():.6g})"))
    return GradcheckResult(ok=True, tolerances=tol)


def batched_forward_check(problem, tol: Tolerances) -> GradcheckResult:
    """jvp is linear in the tangent of each input, and draws no random numbers."""
    rng = np.random.default_rng(3)
    a, b = _LINEAR_COEFFICIENTS
    plain = [arg.detach() if isinstance(arg, Tensor) else arg for arg in problem.args]

    def jvp(index: int, tangent: np.ndarray) -> list:
        with forward_ad.dual_level():
            args = list(plain)
            args[index] = forward_ad.make_dual(plain[index], _tangent_like(plain[index], tangent))
            return _output_tangents(problem, args)

    for index in problem.input_indices:
        size = plain[index]._data.size
        t1, t2 = (rng.standard_normal(size).astype(plain[index]._data.dtype).astype(np.float64)
                  for _ in range(2))
        separate = zip(jvp(index, t1), jvp(index, t2))
        devices = sorted({"cpu", str(plain[index].device)})
        before = [device_state(device) for device in devices]
        combined = jvp(index, a * t1 + b * t2)
        if not all(_same_state(old, device_state(device)) for old, device in zip(before, devices)):
            for state, device in zip(before, devices):
                restore_device_state(state, device)
            return GradcheckResult(
                ok=False, failed_check="batched_forward_grad", tolerances=tol,
                detail=("While computing batched gradients, got: vmap: We do not yet support "
                        "calling random operations inside of vmap (the function, or its jvp, drew "
                        f"random numbers while input {index} had a tangent); draw them outside, "
                        "or pass check_batched_forward_grad=False"))
        for k, ((r1, r2), together) in enumerate(zip(separate, combined)):
            count = problem.outputs[k]._data.size
            expected = a * _or_zeros(r1, count) + b * _or_zeros(r2, count)
            together = _or_zeros(together, count)
            error = np.abs(together - expected)
            if np.all(error <= tol.atol + tol.rtol * np.abs(expected)):
                continue
            return GradcheckResult(
                ok=False, failed_check="batched_forward_grad", tolerances=tol,
                max_abs_error=float(error.max()), total_entries=int(error.size),
                failing_entries=int((error > tol.atol + tol.rtol * np.abs(expected)).sum()),
                detail=(f"the jvp of output {problem.output_indices[k]} is not linear in the tangent "
                        f"of input {index}: jvp(a*t1 + b*t2) differs from a*jvp(t1) + b*jvp(t2) "
                        f"(a={a}, b={b}, t1 and t2 random)"))
    return GradcheckResult(ok=True, tolerances=tol)


def _or_zeros(values, size: int) -> np.ndarray:
    return np.zeros(size) if values is None else values


def _same_state(old, new) -> bool:
    if isinstance(old, dict):
        return old == new
    return bool((old == new).all())
