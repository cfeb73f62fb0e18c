"""Small test helpers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import genesis


def line_of(script, marker: str) -> int:
    """The number of the first line of file `script` that holds `marker`, not counting lines
    that look it up (a test finding the line of its own code)."""
    for number, line in enumerate(Path(script).read_text().splitlines(), 1):
        if marker in line and "line_of(" not in line:
            return number
    raise AssertionError(f"{marker!r} not in {script}")


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def outputs_of(value) -> list:
    """The Tensor outputs of an op call, as a list."""
    if isinstance(value, genesis.Tensor):
        return [value]
    return [v for v in value if isinstance(v, genesis.Tensor)]


class Cube(genesis.Function):
    """x ** 3 as a user-defined Function with a correct backward (what per-node checks see as
    user code)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


def sigmoid_array(tensor) -> np.ndarray:
    return 1 / (1 + np.exp(-tensor._data))


class Float32Sin(genesis.Function):
    """float64 in and out, float32 inside (its outputs are rounded to float32 precision); its
    backward is the exact derivative."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.float().sin().double()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class Float32WrongSign(Float32Sin):
    """Float32Sin with a planted bug: its backward has the wrong sign."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * x.cos()


class Sigmoid(genesis.Function):
    """A user-defined sigmoid whose backward uses the saved output as a constant: its first
    derivative is right, its second is not recorded."""

    @staticmethod
    def forward(ctx, x):
        s = sigmoid_array(x)
        ctx.save_for_backward(genesis.tensor(s, dtype=x.dtype))
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


def usage_error(result) -> str:
    """The one-line message of a CLI usage error (exit status 2, no traceback)."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def leaf(values, dtype=genesis.float64):
    """A float64 (by default) leaf tensor that requires grad."""
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


def grads(output, leaves, weights=None):
    """The gradients of `output` (weighted by `weights`, ones by default) w.r.t. `leaves`, as
    lists (None for a leaf it does not reach)."""
    weights = genesis.ones(output.shape, dtype=output.dtype) if weights is None else weights
    return [None if g is None else g.tolist()
            for g in genesis.autograd.grad(output, leaves, weights, allow_unused=True)]
