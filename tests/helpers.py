"""Small test helpers: finite differences and optional PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import genesis


def numerical_grad(function, arrays: list, index: int, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of sum(function(*tensors) * weights) w.r.t. arrays[index]."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    weights = None
    target = arrays[index]
    grad = np.zeros_like(target)
    flat = target.reshape(-1)
    for position in range(flat.size):
        original = flat[position]
        values = []
        for sign in (1, -1):
            flat[position] = original + sign * eps
            out = function(*[genesis.tensor(a, dtype=genesis.float64) for a in arrays])
            out = out.detach().numpy()
            if weights is None:
                weights = np.random.default_rng(1).standard_normal(out.shape)
            values.append(float((out * weights).sum()))
        flat[position] = original
        grad.reshape(-1)[position] = (values[0] - values[1]) / (2 * eps)
    return grad, weights


def check_grads(function, *arrays, atol=1e-6, rtol=1e-5):
    """Compare analytical gradients of `function` with central differences, in float64."""
    for index in range(len(arrays)):
        numeric, weights = numerical_grad(function, list(arrays), index)
        tensors = [genesis.tensor(np.array(a, dtype=np.float64), dtype=genesis.float64,
                                  requires_grad=(i == index)) for i, a in enumerate(arrays)]
        out = function(*tensors)
        out.backward(genesis.tensor(weights, dtype=genesis.float64))
        np.testing.assert_allclose(tensors[index].grad.numpy(), numeric, atol=atol, rtol=rtol)


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def outputs_of(value) -> list:
    """The Tensor outputs of an op call, as a list."""
    if isinstance(value, genesis.Tensor):
        return [value]
    return [v for v in value if isinstance(v, genesis.Tensor)]
