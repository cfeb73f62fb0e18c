"""`gradcheck` and `gradgradcheck`: compare backward with central finite differences.

Every (output, input) pair whose input requires grad is checked, and a failure
says which check failed, where, by how much, and shows the worst Jacobian
entries (see `gradcheck_report`). `check_gradients` returns the same verdict as
data for tools.

>>> import genesis
>>> x = genesis.tensor([1., 2., 3.], dtype=genesis.float64, requires_grad=True)
>>> gradcheck(lambda x: (x ** 2).sum(), x)
True

When a check fails and inputs that require grad hold NaN or ±inf, the report names those
inputs first (finite differences are undefined there; a function that handles them, such
as fmax ignoring a NaN, still passes, as in PyTorch). A function whose forward gives
different outputs on the same inputs is reported as nondeterministic, not as a wrong
gradient.

Inputs that are not float64 are checked too, with a `GradcheckWarning`: their
analytical gradients are computed in their own dtype, but the numerical side
runs on float64 copies, because float32 central differences with a small
`eps` are mostly rounding noise.
"""
from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor, wrap_array
from . import forward_ad
from .engine import grad, unwatched
from .grad_mode import enable_grad
from .gradcheck_checks import (blamed_on_inputs, deterministic_forward_check, fast_check,
                               linearity_check, non_finite_inputs, slow_check, undefined_grad_check)
from .gradcheck_forward import batched_forward_check, undefined_tangent_check
from .gradcheck_jacobians import (WrongGradientLayout, flat_values, gradient_layout_checked,
                                  numerical_jacobians)
from .gradcheck_legacy import get_analytical_jacobian, get_numerical_jacobian
from .gradcheck_report import GradcheckResult, TensorSummary, Tolerances, format_report

__all__ = ["gradcheck", "gradgradcheck", "check_gradients", "GradcheckError", "GradcheckWarning",
           "get_numerical_jacobian", "get_analytical_jacobian"]  # the last two: torch's deprecated ones

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class GradcheckError(RuntimeError):
    """A gradient check failed; `.result` holds the `GradcheckResult`."""

    def __init__(self, message: str, result: GradcheckResult | None = None):
        super().__init__(message)
        self.result = result


class GradcheckWarning(UserWarning):
    """An input makes the check less reliable (e.g. it is not float64)."""


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, fast_mode: bool = False,
              check_undefined_grad: bool = True, check_batched_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              check_batched_forward_grad: bool = False, max_report: int = 10) -> bool:
    """Check the gradients of `func` at `inputs` against central finite differences.

    `inputs` is a tensor or a tuple (non-tensor items are passed through);
    `func(*inputs)` returns a tensor or a tuple of tensors. Entry by entry,
    |analytical - numerical| must be at most atol + rtol * |numerical|.
    Also checked: two backward runs agree within `nondet_tol`; gradients
    have their input's shape; (`check_undefined_grad`) backward treats missing
    output gradients as zeros; (`check_batched_grad`) backward is linear in
    its grad_outputs (genesis has no batching rules, so this property,
    which batching relies on, is what is checked). `fast_mode` compares one random projection
    v^T J u per pair instead of the whole Jacobian and re-runs the exact check
    only when it fails. `check_forward_ad`: also compare the Jacobian forward-mode AD gives
    (genesis.autograd.forward_ad) with finite differences, and (with `check_undefined_grad`) that
    a zero tangent and no tangent give the same output tangents; `check_batched_forward_grad`:
    the jvp is linear in the tangent and draws no random numbers (what batching tangents needs;
    genesis has no batching rules); `check_backward_ad=False` skips the backward checks.
    Returns True, or raises `GradcheckError` with a report
    (returns False if `raise_exception=False`).

    >>> import genesis
    >>> x = genesis.tensor([0.5, -1.0], dtype=genesis.float64, requires_grad=True)
    >>> gradcheck(lambda x: x.tanh() * x, x, fast_mode=True)
    True
    """
    if not check_forward_ad and not check_backward_ad:
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to "
                             "be True: there is nothing to check otherwise")
    if check_backward_ad:
        result = check_gradients(func, inputs, eps=eps, atol=atol, rtol=rtol,
                                 nondet_tol=nondet_tol, fast_mode=fast_mode,
                                 check_undefined_grad=check_undefined_grad,
                                 check_batched_grad=check_batched_grad, max_report=max_report)
        if not result.ok or not check_forward_ad:
            return _verdict(result, raise_exception)
    if not check_forward_ad:
        return True
    with unwatched:
        problem = _Problem.build(func, inputs, "gradcheck")
        tolerances = Tolerances(eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol)
        result = forward_ad_check(problem, tolerances)
        if result.ok and check_undefined_grad:
            result = undefined_tangent_check(problem, tolerances)
        if result.ok and check_batched_forward_grad:
            result = batched_forward_check(problem, tolerances)
    return _verdict(result, raise_exception)


def forward_ad_check(problem: "_Problem", tol: Tolerances) -> GradcheckResult:
    """The Jacobian forward-mode AD gives, one unit tangent per input element at a time,
    against central differences; the first (output, input) pair out of tolerance fails."""
    numerical = numerical_jacobians(problem.evaluate, problem.numeric_inputs, tol.eps,
                                    [output._data.size for output in problem.outputs])
    for j, index in enumerate(problem.input_indices):
        tensor = problem.args[index]
        columns = []
        for flat in range(tensor._data.size):
            tangent = tensor._device.xp.zeros(tensor._data.size, dtype=tensor._data.dtype)
            tangent[flat] = 1
            args = list(problem.args)
            with forward_ad.dual_level():
                args[index] = forward_ad.make_dual(
                    tensor, wrap_array(tangent.reshape(tensor._data.shape), tensor._device))
                outputs = _tensor_outputs(problem.func(*args), "gradcheck")
                tangents = [forward_ad.unpack_dual(outputs[i]).tangent
                            for i in problem.output_indices]
            columns.append([flat_values(t) if t is not None else np.zeros(o._data.size)
                            for t, o in zip(tangents, problem.outputs)])
        for i, output in enumerate(problem.outputs):
            analytical = (np.stack([column[i] for column in columns], axis=1) if columns
                          else np.zeros((output._data.size, 0)))
            expected = numerical[i][j]
            error = np.abs(analytical - expected)
            failing = ~(error <= tol.atol + tol.rtol * np.abs(expected))
            if failing.any():
                return GradcheckResult(
                    ok=False, failed_check="forward_ad", **problem.summary(i, j),
                    max_abs_error=float(error.max()), failing_entries=int(failing.sum()),
                    total_entries=int(error.size), tolerances=tol,
                    detail=(f"Jacobian computed with forward mode mismatch for output "
                            f"{problem.output_indices[i]} with respect to input {index},\n"
                            f"numerical:{expected}\nanalytical:{analytical}"))
    return GradcheckResult(ok=True, tolerances=tol)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
                  fast_mode: bool = False, check_undefined_grad: bool = True,
                  check_batched_grad: bool = False, max_report: int = 10) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vjp of `func` with v, built with
    create_graph=True. `grad_outputs` (v) default to fixed random tensors like the outputs.

    >>> import genesis
    >>> x = genesis.tensor([0.5, -1.0], dtype=genesis.float64, requires_grad=True)
    >>> gradgradcheck(lambda x: x.tanh(), x)
    True
    """
    args = _as_args(inputs)
    with enable_grad(), unwatched:
        outputs = [o for o in _tensor_outputs(func(*args), "gradgradcheck") if o._requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_random_like(rng, output) for output in outputs)
    else:
        grad_outputs = _as_args(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for {len(outputs)} "
                         "outputs that require grad; pass one per such output")
    count = len(args)

    def first_derivatives(*all_args):
        own_args, vectors = all_args[:count], all_args[count:]
        own_outputs = [o for o in _tensor_outputs(func(*own_args), "gradgradcheck") if o._requires_grad]
        differentiable = [a for a in own_args if isinstance(a, Tensor) and a._requires_grad]
        grads = grad(own_outputs, differentiable, vectors, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    result = check_gradients(first_derivatives, args + tuple(grad_outputs), eps=eps, atol=atol,
                             rtol=rtol, nondet_tol=nondet_tol, fast_mode=fast_mode,
                             check_undefined_grad=check_undefined_grad,
                             check_batched_grad=check_batched_grad, max_report=max_report,
                             check_name="gradgradcheck")
    if result.failed_check == "nondeterministic":  # the function checked here is func's backward
        result.failed_check = "reentrant"
        result.detail = ("func's backward, run twice on the same inputs and grad_outputs, gave "
                         f"different first derivatives: {result.detail}")
    if not result.ok:
        legend = (f"(here inputs 0 to {count - 1} are func's inputs and input {count} + m is the "
                  "grad_output for func's output m; output n is the gradient w.r.t. func's n-th input "
                  "that requires grad)")
        result.detail = f"{result.detail}\n{legend}" if result.detail else legend
    return _verdict(result, raise_exception)


def _verdict(result: GradcheckResult, raise_exception: bool) -> bool:
    if result.ok:
        return True
    if raise_exception:
        raise GradcheckError(format_report(result), result)
    return False


def check_gradients(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                    nondet_tol: float = 0.0, fast_mode: bool = False, check_undefined_grad: bool = True,
                    check_batched_grad: bool = False, max_report: int = 10,
                    check_name: str = "gradcheck") -> GradcheckResult:
    """`gradcheck`'s verdict as a `GradcheckResult` (never raises for a failed check).

    >>> import genesis
    >>> x = genesis.tensor([1., 2.], dtype=genesis.float64, requires_grad=True)
    >>> result = check_gradients(lambda x: x * 3, x)
    >>> result.ok, result.failed_check
    (True, None)
    """
    with unwatched:  # the function's evaluations here are the check's, not the script's steps
        problem = _Problem.build(func, inputs, check_name)
    tolerances = Tolerances(eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol)
    with gradient_layout_checked(), unwatched:
        try:
            result = deterministic_forward_check(problem, tolerances)
            if result is None:
                check = fast_check if fast_mode else slow_check
                result = check(problem, tolerances, max_report)
            if result.ok and check_undefined_grad:
                result = undefined_grad_check(problem, result)
            if result.ok and check_batched_grad:
                result = linearity_check(problem, tolerances, max_report, result)
        except WrongGradientLayout as error:
            result = GradcheckResult(ok=False, failed_check="grad_shape", detail=str(error),
                                     tolerances=tolerances)
    non_finite = non_finite_inputs(problem.args, problem.input_indices)
    if not result.ok and non_finite:  # the inputs are named first: no check is settled there
        result = blamed_on_inputs(result, non_finite)
    result.check_name = check_name
    return result


@dataclass
class _Problem:
    """What is checked: the arguments, the inputs that require grad (and float64 copies for
    the numerical side where they are not float64), and the outputs' graph."""

    func: object
    args: tuple
    input_indices: list       # positions in args of the inputs that require grad
    inputs: list
    numeric_args: tuple
    numeric_inputs: list
    output_indices: list      # positions in func's result of the floating outputs
    outputs: list
    numeric_dtypes: dict = field(default_factory=dict)  # output index -> dtype on the numerical side

    @classmethod
    def build(cls, func, inputs, check_name: str) -> "_Problem":
        args = _as_args(inputs)
        input_indices = [index for index, arg in enumerate(args)
                         if isinstance(arg, Tensor) and arg._requires_grad]
        if not input_indices:
            raise ValueError(f"{check_name}: no input requires grad, so there is nothing to check; "
                             "create the inputs to check with requires_grad=True")
        _warn_low_precision(args, input_indices, check_name)
        numeric_args = list(args)
        if any(args[index]._data.dtype != np.float64 for index in input_indices):
            # The numerical side runs in float64: every floating tensor argument gets a float64
            # copy (not only those checked), so the op sees consistent dtypes.
            for index, arg in enumerate(args):
                if isinstance(arg, Tensor) and arg._data.dtype in FLOATING_NUMPY_DTYPES and \
                        arg._data.dtype != np.float64:
                    copy = wrap_array(arg._data.astype(np.float64), arg._device)
                    copy._requires_grad = index in input_indices
                    numeric_args[index] = copy
        with enable_grad():
            all_outputs = _tensor_outputs(func(*args), check_name)
        output_indices = [index for index, output in enumerate(all_outputs)
                          if output._data.dtype in FLOATING_NUMPY_DTYPES]
        return cls(func, args, input_indices, [args[index] for index in input_indices],
                   tuple(numeric_args), [numeric_args[index] for index in input_indices],
                   output_indices, [all_outputs[index] for index in output_indices])

    def evaluate(self) -> list:
        """The floating outputs at the (perturbed) numeric inputs, as flat float64 arrays."""
        with enable_grad():
            outputs = _tensor_outputs(self.func(*self.numeric_args), "the function")
        values = []
        for index, reference in zip(self.output_indices, self.outputs):
            if index >= len(outputs) or outputs[index].shape != reference.shape:
                now = f"shape {tuple(outputs[index].shape)}" if index < len(outputs) else "no such output"
                raise AssertionError(
                    "Expected `func` to return outputs with the same shape when inputs are perturbed: "
                    f"output {index} had shape {tuple(reference.shape)}, then {now}; gradcheck "
                    "needs outputs whose shapes do not depend on the input values")
            dtype = outputs[index].dtype
            if self.numeric_dtypes.setdefault(index, dtype) is not dtype:
                raise AssertionError(
                    "Expected `func` to return outputs with the same dtype when inputs are perturbed: "
                    f"output {index} was {self.numeric_dtypes[index].name}, then {dtype.name}; "
                    "gradcheck needs outputs whose dtypes do not depend on the input values")
            values.append(flat_values(outputs[index]))
        return values

    def differentiable_outputs(self) -> list:
        return [output for output in self.outputs if output._requires_grad]

    def summary(self, output_number: int, input_number: int) -> dict:
        fields = {}
        if output_number is not None:
            output = self.outputs[output_number]
            fields.update(output_index=self.output_indices[output_number],
                          output=TensorSummary(tuple(output.shape), output.dtype.name))
        if input_number is not None:
            tensor = self.inputs[input_number]
            fields.update(input_index=self.input_indices[input_number],
                          input=TensorSummary(tuple(tensor.shape), tensor.dtype.name))
        return fields


def _as_args(inputs) -> tuple:
    if isinstance(inputs, Tensor):
        return (inputs,)
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs)
    raise TypeError(f"inputs must be a Tensor or a tuple of arguments, got {type(inputs).__name__}")


def _tensor_outputs(result, check_name: str) -> tuple:
    outputs = (result,) if isinstance(result, Tensor) else result
    if not isinstance(outputs, (tuple, list)):
        raise TypeError(f"{check_name}: the function must return a Tensor or a tuple of Tensors, "
                        f"got {type(result).__name__}")
    for index, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise TypeError(f"{check_name}: the function must return a Tensor or a tuple of Tensors, "
                            f"but output {index} is a {type(output).__name__}")
    return tuple(outputs)


def _random_like(rng, output: Tensor) -> Tensor:
    values = rng.standard_normal(output.shape)
    vector = wrap_array(output._device.xp.asarray(values, dtype=output._data.dtype), output._device)
    vector._requires_grad = True
    return vector


def _warn_low_precision(args: tuple, input_indices: list, check_name: str) -> None:
    low = [f"input {index} ({args[index].dtype.name})" for index in input_indices
           if args[index]._data.dtype != np.float64]
    if low:
        warnings.warn(
            f"{check_name}: {', '.join(low)} requires grad but is not float64. Finite differences in "
            "float32 are unreliable (with eps=1e-6 they are mostly rounding noise), so the numerical "
            "gradient is taken on float64 copies while the analytical one stays in the input's dtype. "
            "For the most precise check, pass float64 inputs.", GradcheckWarning,
            stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The stacklevel of the innermost caller outside genesis (for warnings)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_GENESIS_DIR):
        frame, level = frame.f_back, level + 1
    return level
