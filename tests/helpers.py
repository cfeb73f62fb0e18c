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


def finite_difference_check(call, args, kwargs, eps=1e-6, atol=1e-6, rtol=1e-5):
    """Check the vector-Jacobian product of `call` against central differences, in place on the
    leaves in `args` (which may be non-contiguous); float64 inputs expected."""
    leaves = [a for a in args if isinstance(a, genesis.Tensor) and a.requires_grad]
    if not leaves:
        return
    outs = [o for o in outputs_of(call(*args, **kwargs)) if o.requires_grad]
    rng = np.random.default_rng(7)
    weights = [genesis.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
    if not outs:
        return
    analytic = genesis.autograd.grad(outs, leaves, weights, allow_unused=True)

    def objective():
        with genesis.no_grad():
            values = [v for v in outputs_of(call(*args, **kwargs)) if v.dtype.is_floating_point]
        return sum(float((v.numpy() * w.numpy()).sum()) for v, w in zip(values, weights))

    for leaf, grad in zip(leaves, analytic):
        numeric = np.zeros(leaf.shape)
        data = leaf._data
        for index in np.ndindex(*leaf.shape):
            original = data[index]
            data[index] = original + eps
            plus = objective()
            data[index] = original - eps
            minus = objective()
            data[index] = original
            numeric[index] = (plus - minus) / (2 * eps)
        got = np.zeros(leaf.shape) if grad is None else grad.numpy()
        np.testing.assert_allclose(got, numeric, atol=atol, rtol=rtol)
