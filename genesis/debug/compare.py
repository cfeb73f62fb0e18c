"""Do two implementations agree? Outputs and gradients of `a` and `b` on the same inputs.

The typical use is a fused or hand-written implementation against the plain one: a fused
attention against a naive one, a custom Function's backward against autograd's. Both run
on identical copies of the inputs (in float64 unless told otherwise, so that rounding does
not hide or fake a difference); their outputs are compared, then both are differentiated
with the same random output gradients, and the gradients with respect to every floating
input (and every parameter, for Modules) are compared. Modules get B's parameters copied
from A's by name, so the two start from the same weights.

A difference is judged as `torch.testing.assert_close` does, symmetrically:
|a - b| <= atol + rtol * max(|a|, |b|), NaN equal to NaN at the same places.

>>> import genesis
>>> def softplus_naive(x):
...     return (1 + x.exp()).log()
>>> def softplus_stable(x):
...     return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
>>> result = compare(softplus_naive, softplus_stable, genesis.randn(5))
>>> result.agree
True
>>> [row.name for row in result.rows]
['output', 'gradient of x']
"""
from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field

import numpy as np

from ..autograd import function as autograd_function
from ..autograd.engine import grad as autograd_grad
from ..autograd.grad_mode import enable_grad
from ..creation import tensor as make_tensor
from ..dtypes import float32, float64, get_dtype
from ..nn.module import Module
from ..random import manual_seed
from ..tensor import Tensor
from .blame import forward_input_names
from .difference_shape import explain_difference

__all__ = ["compare", "Comparison", "ComparedValue", "default_tolerances"]

_WORST = 5  # entries shown per differing value


@dataclass
class ComparedValue:
    """One output or gradient of A beside B's: its errors, whether they agree, the worst
    entries as (index, a, b)."""

    name: str
    agree: bool
    shape: tuple | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    differing: int = 0
    total: int = 0
    worst: list = field(default_factory=list)
    note: str = ""


@dataclass
class Comparison:
    """What `compare` found: one ComparedValue per output and per gradient."""

    rows: list
    dtype: object
    atol: float
    rtol: float
    seed: int
    notes: list = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return all(row.agree for row in self.rows)

    def __str__(self) -> str:
        lines = [f"{row.name}: {'agree' if row.agree else 'DIFFER'}"
                 + (f", max abs error {row.max_abs_error:.3g}" if row.max_abs_error is not None else "")
                 + (f" ({row.note})" if row.note else "") for row in self.rows]
        return "\n".join(lines)


def default_tolerances(dtype) -> tuple:
    """(atol, rtol) for comparing values of `dtype`, those of torch.testing.assert_close.

    >>> import genesis
    >>> default_tolerances(genesis.float64)
    (1e-07, 1e-07)
    """
    name = get_dtype(dtype).name
    return {"float64": (1e-7, 1e-7), "float32": (1e-5, 1.3e-6),
            "float16": (1e-5, 1e-3), "bfloat16": (1e-5, 1.6e-2)}.get(name, (0.0, 0.0))


def compare(a, b, *inputs, dtype=float64, atol: float | None = None, rtol: float | None = None,
            seed: int = 0, names: tuple = ("A", "B")) -> Comparison:
    """Run `a` and `b` on the same `inputs` and compare their outputs and gradients.

    `a` and `b` are callables, `genesis.autograd.Function` subclasses (run through
    `.apply`) or Modules (B gets A's parameters and buffers by name; both are copied,
    so the caller's modules are not changed). Floating tensor inputs are copied to
    `dtype` as leaves that require grad, one copy per implementation; other inputs (index
    tensors, numbers) are passed as they are. Raises ValueError when B's parameters can't
    take A's (a name or shape without a match); an implementation that raises is a
    difference, reported in its row. When one raises in float64 (a kernel written for
    float32, say) both are compared again in float32, and `notes` says so.
    """
    dtype = get_dtype(dtype)
    result = _compare_in(a, b, inputs, dtype, atol, rtol, seed, names)
    raised = [row.note for row in result.rows if " raised " in row.note]
    if raised and dtype is float64:
        retried = _compare_in(a, b, inputs, float32, atol, rtol, seed, names)
        if not any(" raised " in row.note for row in retried.rows):
            retried.notes.append(f"compared in float32: in float64 {raised[0]}")
            return retried
    return result


def _compare_in(a, b, inputs, dtype, atol, rtol, seed, names) -> Comparison:
    """`compare` in one dtype."""
    default_atol, default_rtol = default_tolerances(dtype)
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    run_a, run_b, labels = _prepared(a, b, dtype, names)
    input_names = _input_names(a, len(inputs))
    copies_a, copies_b = _copied(inputs, dtype), _copied(inputs, dtype)
    rows, notes = [], []
    results = []
    for run, copies, label in ((run_a, copies_a, names[0]), (run_b, copies_b, names[1])):
        manual_seed(seed)  # dropout and other randomness draw the same numbers in both
        try:
            with enable_grad():
                results.append(run(*copies))
        except Exception as error:  # a difference to report, not a crash of the comparison
            rows.append(ComparedValue("output", False, note=f"{label} raised "
                                      f"{type(error).__name__}: {error}"))
            results.append(None)
    if rows:
        return Comparison(rows, dtype, atol, rtol, seed, notes)
    outputs_a, outputs_b = _flattened(results[0]), _flattened(results[1])
    if [path for path, _ in outputs_a] != [path for path, _ in outputs_b]:
        rows.append(ComparedValue("output", False, note=f"{names[0]} returns "
                                  f"{_structure(outputs_a)}, {names[1]} returns {_structure(outputs_b)}"))
        return Comparison(rows, dtype, atol, rtol, seed, notes)
    single = len(outputs_a) == 1
    for (path, value_a), (_, value_b) in zip(outputs_a, outputs_b):
        rows.append(_compared(f"output{'' if single else ' ' + path}", value_a, value_b,
                              atol, rtol, names))
    reshaped = [f"{'output' if single else 'output ' + path} is {tuple(value_a.shape)} in "
                f"{names[0]}, {tuple(value_b.shape)} in {names[1]}"
                for (path, value_a), (_, value_b) in zip(outputs_a, outputs_b)
                if isinstance(value_a, Tensor) and isinstance(value_b, Tensor)
                and tuple(value_a.shape) != tuple(value_b.shape)]
    if reshaped:  # no output gradient fits both backwards
        notes.append("gradients not compared: the outputs' shapes differ (" + "; ".join(reshaped)
                     + "), so no output gradient fits both")
        return Comparison(rows, dtype, atol, rtol, seed, notes)
    leaves_a = _leaves(copies_a, input_names, labels[0])
    leaves_b = _leaves(copies_b, input_names, labels[1])
    rows += _gradient_rows(outputs_a, outputs_b, leaves_a, leaves_b, seed, atol, rtol, names)
    return Comparison(rows, dtype, atol, rtol, seed, notes)


def _prepared(a, b, dtype, names):
    """The two callables to run, and for Modules their named parameters and buffers (B's
    set from A's). Returns (run_a, run_b, (params_a, params_b))."""
    run_a, run_b = _callable(a, dtype), _callable(b, dtype)
    params_a = dict(run_a.named_parameters()) if isinstance(run_a, Module) else {}
    params_b = dict(run_b.named_parameters()) if isinstance(run_b, Module) else {}
    if isinstance(run_a, Module) and isinstance(run_b, Module):
        _copy_state(run_a, run_b, names)
    return run_a, run_b, (params_a, params_b)


def _callable(implementation, dtype):
    if isinstance(implementation, type) and issubclass(implementation, autograd_function.Function):
        return implementation.apply
    if isinstance(implementation, Module):
        copied = copy.deepcopy(implementation)
        return copied.to(dtype) if dtype.is_floating_point else copied
    if not callable(implementation):
        raise TypeError(f"compare: {implementation!r} is not callable, a Function or a Module")
    return implementation


def _copy_state(source: Module, target: Module, names) -> None:
    """Give `target` the parameters and buffers of `source`, matched by name and shape."""
    theirs, ours = source.state_dict(), target.state_dict()
    missing = sorted(set(ours) - set(theirs))
    if missing:
        raise ValueError(f"compare: {names[1]} has parameters or buffers {names[0]} lacks: "
                         f"{', '.join(missing[:6])}; name them alike so that {names[1]} can start "
                         f"from {names[0]}'s values")
    wrong = [f"{key} {tuple(theirs[key].shape)} vs {tuple(ours[key].shape)}"
             for key in ours if tuple(theirs[key].shape) != tuple(ours[key].shape)]
    if wrong:
        raise ValueError(f"compare: shapes differ between {names[0]} and {names[1]}: "
                         + "; ".join(wrong[:4]))
    target.load_state_dict({key: theirs[key] for key in ours})


def _input_names(implementation, count: int) -> list:
    """The names of the inputs, from forward's (or the function's) signature."""
    if isinstance(implementation, type) and issubclass(implementation, autograd_function.Function):
        parameters = forward_input_names(implementation)
    else:
        function = implementation.forward if isinstance(implementation, Module) else implementation
        try:
            parameters = [p.name for p in inspect.signature(function).parameters.values()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            parameters = []
    return [parameters[index] if index < len(parameters) else f"input {index}"
            for index in range(count)]


def _copied(inputs, dtype) -> list:
    """Fresh copies of the inputs: floating tensors as `dtype` leaves requiring grad."""
    copies = []
    for value in inputs:
        if isinstance(value, Tensor) and value.dtype.is_floating_point:
            copies.append(value.detach().to(dtype).clone().requires_grad_(True))
        elif isinstance(value, Tensor):
            copies.append(value.detach().clone())
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
            copies.append(make_tensor(value, dtype=dtype, requires_grad=True))
        else:
            copies.append(copy.deepcopy(value))
    return copies


def _flattened(result, path: str = "") -> list:
    """[(path, value)] of an output structure: tensors, tuples/lists and dicts of them,
    numbers and None as leaves."""
    if isinstance(result, (tuple, list)):
        return [item for index, value in enumerate(result)
                for item in _flattened(value, f"{path}[{index}]")]
    if isinstance(result, dict):
        return [item for key, value in result.items()
                for item in _flattened(value, f"{path}[{key!r}]")]
    return [(path or "", result)]


def _structure(outputs: list) -> str:
    tensors = sum(1 for _, value in outputs if isinstance(value, Tensor))
    return f"{len(outputs)} value{'s' if len(outputs) != 1 else ''} ({tensors} tensor" \
        f"{'s' if tensors != 1 else ''}: {', '.join(path or 'the output' for path, _ in outputs)})"


def _leaves(copies, input_names, parameters) -> list:
    """[(name, leaf)] to differentiate with respect to: floating inputs, then parameters."""
    leaves = [(f"gradient of {name}", value) for name, value in zip(input_names, copies)
              if isinstance(value, Tensor) and value.requires_grad]
    leaves += [(f"gradient of parameter {name}", value) for name, value in parameters.items()
               if value.requires_grad]
    return leaves


def _gradient_rows(outputs_a, outputs_b, leaves_a, leaves_b, seed, atol, rtol, names) -> list:
    """Both sides differentiated with the same random output gradients."""
    differentiable = [(value_a, value_b) for (_, value_a), (_, value_b) in zip(outputs_a, outputs_b)
                      if isinstance(value_a, Tensor) and isinstance(value_b, Tensor)
                      and value_a.dtype.is_floating_point and value_b.dtype.is_floating_point]
    rows = []
    requires = [(value_a.requires_grad, value_b.requires_grad) for value_a, value_b in differentiable]
    if any(left != right for left, right in requires):
        rows.append(ComparedValue("gradients", False, note=f"an output needs grad in only one of "
                                  f"{names[0]} and {names[1]}: {requires}"))
        return rows
    pairs = [(value_a, value_b) for value_a, value_b in differentiable if value_a.requires_grad]
    if not pairs or not leaves_a:
        return rows
    rng = np.random.default_rng(seed)
    seeds = [rng.standard_normal(tuple(value_a.shape)) for value_a, _ in pairs]
    grads = []
    for index, leaves in ((0, leaves_a), (1, leaves_b)):
        outputs = [pair[index] for pair in pairs]
        grad_outputs = [make_tensor(values, dtype=output.dtype, device=output.device)
                        for values, output in zip(seeds, outputs)]
        try:
            grads.append(autograd_grad(outputs, [leaf for _, leaf in leaves], grad_outputs,
                                       allow_unused=True))
        except Exception as error:  # a backward that raises is a difference
            rows.append(ComparedValue("gradients", False, note=f"{names[index]}'s backward "
                                      f"raised {type(error).__name__}: {error}"))
            return rows
    for (name, _), grad_a, grad_b in zip(leaves_a, grads[0], grads[1]):
        rows.append(_compared(name, grad_a, grad_b, atol, rtol, names, gradient=True))
    return rows


def _compared(name, value_a, value_b, atol, rtol, names, gradient: bool = False) -> ComparedValue:
    if value_a is None and value_b is None:
        return ComparedValue(name, True, note="no gradient in either: it does not reach the "
                             "outputs" if gradient else "None in both")
    if gradient and (value_a is None or value_b is None):
        present = value_b if value_a is None else value_a
        absent = names[0] if value_a is None else names[1]
        if not bool((present.detach() == 0).all()):
            return ComparedValue(name, False, shape=tuple(present.shape),
                                 note=f"{absent} gives no gradient (the input does not reach its "
                                      "outputs); the other gives a nonzero one")
        return ComparedValue(name, True, shape=tuple(present.shape),
                             note=f"{absent} gives none, the other zeros")
    if not isinstance(value_a, Tensor) or not isinstance(value_b, Tensor):
        same = value_a == value_b if not (isinstance(value_a, Tensor) or isinstance(value_b, Tensor)) \
            else False
        return ComparedValue(name, bool(same), note="" if same else
                             f"{names[0]} gives {value_a!r}, {names[1]} gives {value_b!r}")
    if tuple(value_a.shape) != tuple(value_b.shape):
        return ComparedValue(name, False, note=f"shapes differ: {tuple(value_a.shape)} in "
                             f"{names[0]}, {tuple(value_b.shape)} in {names[1]}")
    left = value_a.detach().cpu().numpy().astype(np.float64)
    right = value_b.detach().cpu().numpy().astype(np.float64)
    return _judged(name, left, right, atol, rtol)


def _judged(name, left: np.ndarray, right: np.ndarray, atol, rtol) -> ComparedValue:
    both_nan = np.isnan(left) & np.isnan(right)
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.where(both_nan | (left == right), 0.0, np.abs(left - right))
        scale = np.maximum(np.abs(left), np.abs(right))
        relative = np.where(difference == 0, 0.0, difference / np.where(scale == 0, 1.0, scale))
        bad = ~(difference <= atol + rtol * scale)  # NaN in one side only counts as bad
    bad &= ~both_nan
    order = np.argsort(np.where(np.isnan(difference), np.inf, difference), axis=None)[::-1]
    worst = [(tuple(int(i) for i in np.unravel_index(flat, left.shape)),
              float(left.flat[flat]), float(right.flat[flat]))
             for flat in order[:_WORST] if bad.flat[flat]]
    finite = difference[np.isfinite(difference)]
    return ComparedValue(name, not bool(bad.any()), shape=left.shape,
                         note=explain_difference(left, right, atol, rtol) if bad.any() else "",
                         max_abs_error=float(finite.max()) if finite.size else
                         (float("nan") if difference.size else 0.0),
                         max_rel_error=float(relative[np.isfinite(relative)].max())
                         if np.isfinite(relative).any() else 0.0,
                         differing=int(bad.sum()), total=int(left.size), worst=worst)


