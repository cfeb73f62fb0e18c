"""The in-place activations of `torch.nn.functional` (`F.elu_`, `F.leaky_relu_`,
`F.hardtanh_`, `F.selu_`, `F.celu_`, `F.threshold_`): each overwrites its input with the
activation and returns it, through the out-of-place function's `inplace=True` path (one
gradient rule for both), or for `threshold_` through `masked_fill_`."""
from __future__ import annotations

from ..ops.activation import celu, elu, hardtanh, leaky_relu, selu
from ..tensor import Tensor

__all__ = ["elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_"]


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `elu`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.elu_(genesis.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place `leaky_relu`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.leaky_relu_(genesis.tensor([-1.0, 2.0]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place `hardtanh`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.hardtanh_(genesis.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place `selu`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.selu_(genesis.tensor([1.0]))
    tensor([1.0507])
    """
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `celu`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.celu_(genesis.tensor([-2.0, 1.0]), 2.0)
    tensor([-1.2642,  1.0000])
    """
    return celu(input, alpha, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place `threshold`: elements not above `threshold` become `value`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.threshold_(genesis.tensor([-1.0, 2.0]), 0.0, 5.0)
    tensor([5., 2.])
    """
    return input.masked_fill_(input <= threshold, value)
