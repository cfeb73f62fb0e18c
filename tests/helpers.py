"""Small test helpers."""
from __future__ import annotations

import numpy as np
import pytest

import genesis


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
