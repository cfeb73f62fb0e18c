"""`get_numerical_jacobian` and `get_analytical_jacobian`: the Jacobian helpers PyTorch once
exposed from `torch.autograd.gradcheck` and now deprecates. They keep PyTorch's signatures,
results and `FutureWarning`, so old scripts run; new code should call `gradcheck` or
`genesis.autograd.functional.jacobian`.

Both return, per input that requires grad, a Jacobian of shape (input.numel(), output.numel())
in the input's dtype (rows: input entries, columns: output entries), for one output.

>>> import warnings, genesis
>>> x = genesis.tensor([1.0, 2.0], dtype=genesis.float64, requires_grad=True)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     (jacobian,) = get_numerical_jacobian(lambda inputs: inputs[0] * 3, (x,), eps=1e-6)
>>> jacobian.round(6).tolist()
[[3.0, 0.0], [0.0, 3.0]]
"""
from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor, wrap_array
from .engine import grad
from .gradcheck_jacobians import flat_values, numerical_jacobians

__all__ = ["get_numerical_jacobian", "get_analytical_jacobian"]


def _deprecated(name: str) -> None:
    warnings.warn(f"`{name}` was part of PyTorch's private API and not meant to be exposed; it is "
                  "deprecated there and will be removed. genesis keeps it for old scripts: use "
                  "genesis.autograd.gradcheck, or genesis.autograd.functional.jacobian for the "
                  "Jacobian itself.", FutureWarning, stacklevel=3)


def _only_unit_grad_out(name: str, grad_out) -> None:
    if grad_out != 1.0:
        raise ValueError(f"Expected grad_out to be 1.0. {name} no longer supports values of "
                         f"grad_out != 1.0 (got {grad_out}); scale the Jacobian it returns instead.")


def _tensors(value, requiring_grad: bool) -> list:
    """The tensors in `value` (a tensor or nested sequences), in order."""
    if isinstance(value, Tensor):
        return [value] if value._requires_grad or not requiring_grad else []
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in _tensors(item, requiring_grad)]
    return []


def _as_tensor(jacobian: np.ndarray, like: Tensor) -> Tensor:
    return wrap_array(like._device.xp.asarray(jacobian, dtype=like._data.dtype), like._device)


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0) -> tuple:
    """Deprecated (as in PyTorch): the central-difference Jacobian of `fn(inputs)`'s first output
    with respect to each tensor of `target` (default `inputs`) that requires grad.

    `fn` takes the inputs as one tuple. Returns one (input.numel(), output.numel()) tensor per
    such tensor.

    >>> import warnings, genesis
    >>> a = genesis.tensor([1.0, 2.0], dtype=genesis.float64, requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     (jacobian,) = get_numerical_jacobian(lambda inputs: inputs[0] ** 2, (a,), eps=1e-6)
    >>> jacobian.round(4).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    _deprecated("get_numerical_jacobian")
    _only_unit_grad_out("get_numerical_jacobian", grad_out)
    targets = _tensors(inputs if target is None else target, requiring_grad=True)

    def first_output() -> list:
        outputs = fn(inputs)
        return [flat_values(outputs if isinstance(outputs, Tensor) else outputs[0])]

    size = first_output()[0].size
    jacobians = numerical_jacobians(first_output, targets, eps, [size])[0]
    return tuple(_as_tensor(jacobian.T, tensor) for jacobian, tensor in zip(jacobians, targets))


def get_analytical_jacobian(inputs, output: Tensor, nondet_tol: float = 0.0, grad_out: float = 1.0) -> tuple:
    """Deprecated (as in PyTorch): the Jacobian of `output` with respect to each tensor of
    `inputs` that requires grad, from backward, one row per output entry, computed twice.

    Returns `(jacobians, reentrant, correct_grad_sizes, correct_grad_types)`: `reentrant` is
    False when the two runs differ by more than `nondet_tol`; the other two say whether every
    gradient had its input's shape and dtype.

    >>> import warnings, genesis
    >>> a = genesis.tensor([1.0, 2.0], dtype=genesis.float64, requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     jacobians, reentrant, sizes_ok, types_ok = get_analytical_jacobian((a,), a * 3)
    >>> jacobians[0].tolist(), reentrant, sizes_ok, types_ok
    ([[3.0, 0.0], [0.0, 3.0]], True, True, True)
    """
    _deprecated("get_analytical_jacobian")
    _only_unit_grad_out("get_analytical_jacobian", grad_out)
    differentiable = _tensors(inputs, requiring_grad=True)
    sizes_ok = types_ok = True
    runs = []
    for _ in range(2):  # twice: a backward that is not deterministic is not reentrant
        jacobians = [np.zeros((tensor._data.size, output._data.size)) for tensor in differentiable]
        for row in range(output._data.size):
            seed = output._device.xp.zeros(output._data.size, dtype=output._data.dtype)
            seed[row] = 1
            grads = grad(output, differentiable, wrap_array(seed.reshape(output._data.shape), output._device),
                         retain_graph=True, allow_unused=True)
            for jacobian, gradient, tensor in zip(jacobians, grads, differentiable):
                if gradient is None:
                    continue
                sizes_ok &= gradient.shape == tensor.shape
                types_ok &= gradient.dtype == tensor.dtype
                jacobian[:, row] = flat_values(gradient)
        runs.append(jacobians)
    first, second = runs
    reentrant = all(np.all(np.abs(one - two) <= nondet_tol) for one, two in zip(first, second))
    return (tuple(_as_tensor(jacobian, tensor) for jacobian, tensor in zip(first, differentiable)),
            bool(reentrant), bool(sizes_ok), bool(types_ok))
