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
