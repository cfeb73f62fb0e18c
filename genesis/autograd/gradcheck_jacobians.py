"""The two sides of a gradient check, as float64 NumPy arrays.

Numerical: central differences, perturbing each input's storage in place (so
non-contiguous inputs and views work) and restoring it exactly afterwards.
Analytical: vector-Jacobian products through `genesis.autograd.grad`, one per
Jacobian row. Jacobians are indexed `[output][input]` with shape
`(output.numel(), input.numel())`, in C order of the logical indices.

>>> import genesis
>>> x = genesis.tensor([1.0, 2.0], dtype=genesis.float64, requires_grad=True)
>>> evaluate = lambda: [flat_values(x * x)]
>>> numerical_jacobians(evaluate, [x], 1e-6, [2])[0][0].round(6)
array([[2., 0.],
       [0., 4.]])
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor, wrap_array
from .engine import grad, node_checkers

__all__ = ["numerical_jacobians", "moved_outputs", "numerical_projections", "analytical_rows", "vjp_arrays",
           "flat_values", "gradient_layout_checked", "WrongGradientLayout"]


def flat_values(tensor: Tensor) -> np.ndarray:
    """A float64 host copy of `tensor`, flattened in C order of its logical indices."""
    return np.array(tensor._host_array(), dtype=np.float64).reshape(-1)


def numerical_jacobians(evaluate, inputs: list, eps: float, output_sizes: list) -> list:
    """`J[i][j]` for each output i of `evaluate()` (a list of flat arrays, of `output_sizes`)
    and input tensor j."""
    columns_per_input = []
    for tensor in inputs:
        data = tensor._data
        columns = []
        for flat in range(data.size):
            position = np.unravel_index(flat, data.shape)
            plus = moved_outputs(evaluate, data, position, eps)
            minus = moved_outputs(evaluate, data, position, -eps)
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: a NaN entry
                columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        columns_per_input.append(columns)
    return [[_stack_columns([column[i] for column in columns], size)
             for columns in columns_per_input] for i, size in enumerate(output_sizes)]


def moved_outputs(evaluate, data, position: tuple, step: float) -> list:
    """`evaluate()` with the element of `data` at `position` moved by `step`, then put back
    exactly."""
    original = data[position].copy()
    data[position] = original + step
    try:
        return evaluate()
    finally:
        data[position] = original


def _stack_columns(columns: list, rows: int) -> np.ndarray:
    return np.stack(columns, axis=1) if columns else np.zeros((rows, 0))


def numerical_projections(evaluate, inputs: list, directions: list, weights: list, eps: float) -> np.ndarray:
    """`P[i, j] = weights[i] . (d output_i / d input_j) directions[j]`, two evaluations per input."""
    projections = np.zeros((len(weights), len(inputs)))
    for j, (tensor, direction) in enumerate(zip(inputs, directions)):
        data = tensor._data
        original = data.copy()
        step = tensor._device.xp.asarray(eps * direction.reshape(data.shape), dtype=data.dtype)
        data[...] = original + step
        plus = evaluate()
        data[...] = original - step
        minus = evaluate()
        data[...] = original
        for i, weight in enumerate(weights):
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: a NaN entry
                projections[i, j] = weight @ (plus[i] - minus[i]) / (2 * eps)
    return projections


def vjp_arrays(outputs: list, inputs: list, seeds: list) -> list:
    """The gradient of `sum((output * seed).sum())` w.r.t. each input, flat float64 (None if
    unused); each seed is a flat array of its output's size."""
    seed_tensors = [wrap_array(o._device.xp.asarray(seed.reshape(o.shape), dtype=o._data.dtype), o._device)
                    for o, seed in zip(outputs, seeds)]
    grads = grad(outputs, inputs, seed_tensors, retain_graph=True, allow_unused=True)
    return [None if g is None else flat_values(g) for g in grads]


def analytical_rows(outputs: list, index: int, inputs: list) -> tuple:
    """Two independent runs of the Jacobian rows of `outputs[index]`, and which inputs it reaches.

    Every output gets a gradient (zeros for the others), so no backward sees an
    undefined one here. Returns `(first, second, connected)`: `first[j]` and
    `second[j]` have shape `(output.numel(), inputs[j].numel())`; `connected[j]`
    is False when backward never produced a gradient for input j.
    """
    count = outputs[index]._data.size
    first = [np.zeros((count, tensor._data.size)) for tensor in inputs]
    second = [np.zeros((count, tensor._data.size)) for tensor in inputs]
    connected = [False] * len(inputs)
    seeds = [np.zeros(output._data.size) for output in outputs]
    for row in range(count):
        seeds[index] = np.zeros(count)
        seeds[index][row] = 1.0
        for runs in (first, second):
            for j, values in enumerate(vjp_arrays(outputs, inputs, seeds)):
                if values is not None:
                    runs[j][row] = values
                    connected[j] = True
    return first, second, connected


class WrongGradientLayout(Exception):
    """A backward returned a gradient its input cannot take (raised by the layout checker)."""


@contextlib.contextmanager
def gradient_layout_checked():
    """While active, a backward returning a gradient of the wrong shape or dtype raises
    `WrongGradientLayout` naming the node, before the engine would reject it."""
    node_checkers.add(_check_layout)
    try:
        yield
    finally:
        node_checkers.discard(_check_layout)


def _check_layout(node, grad_outputs, grad_inputs, flowed_from) -> None:
    for index in node._non_tensor_inputs:  # a user's Function's arguments that are not tensors
        if index < len(grad_inputs) and grad_inputs[index] is not None:
            raise WrongGradientLayout(f"{type(node).__name__} returned a gradient for its input "
                                      f"{index}, which is not a tensor; return None there")
    for index, (gradient, meta) in enumerate(zip(grad_inputs, node._input_meta)):
        if gradient is None or meta is None:
            continue
        name = type(node).__name__
        if not isinstance(gradient, Tensor):
            raise WrongGradientLayout(f"{name} returned a {type(gradient).__name__} as the gradient "
                                      f"for its input {index}; return a genesis Tensor (or None)")
        shape, numpy_dtype = meta[0], meta[1]
        if not _broadcasts_to(shape, gradient._data.shape):
            where = f" (its forward was called at {node._source})" if node._source is not None else ""
            raise WrongGradientLayout(
                f"{name} returned a gradient of shape {tuple(gradient.shape)} for its input {index}, "
                f"which has shape {tuple(shape)}{where}")
        if gradient._data.dtype not in FLOATING_NUMPY_DTYPES:
            raise WrongGradientLayout(
                f"{name} returned a {gradient.dtype.name} gradient for its input {index}, which is "
                f"{numpy_dtype}; gradients must be floating point")


_check_layout.keeps_gradients = False  # reads shapes and dtypes only (engine.NodeChecker)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False
