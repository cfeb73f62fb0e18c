"""The window functions of signal processing, as PyTorch's: `hann_window`, `hamming_window`,
`blackman_window`, `bartlett_window`, `kaiser_window` (periodic by default, for spectral
analysis; `periodic=False` gives the symmetric window of filter design). `layout` is
accepted and ignored: genesis tensors are dense.

>>> import genesis
>>> genesis.hann_window(4, periodic=False)
tensor([0.0000, 0.7500, 0.7500, 0.0000])
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import arange, ones
from ..tensor import Tensor, wrap_array

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _window(op: str, window_length: int, periodic: bool, dtype, device, requires_grad, shape):
    """`shape(n, N)` on n = 0..window_length-1 with N the period, as a new tensor."""
    if window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.get_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got {dtype.name}")
    if window_length <= 1:
        result = ones(window_length, dtype=dtype, device=device)
    else:
        n = arange(window_length, dtype=dtypes.float64, device=device)
        result = shape(n, window_length + 1 if periodic else window_length).to(dtype)
    if requires_grad:
        result.requires_grad_()
    return result


def _cosine_sum(*coefficients):
    def shape(n, period):
        phase = n * (2 * math.pi / (period - 1))
        total = coefficients[0]
        for k, coefficient in enumerate(coefficients[1:], 1):
            total = total + coefficient * (phase * k).cos()
        return total
    return shape


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window, 0.5 - 0.5 cos(2 pi n / (N - 1)); N = window_length + 1 when
    `periodic` (for spectral analysis), window_length otherwise.

    >>> import genesis
    >>> genesis.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, -0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window, alpha - beta cos(2 pi n / (N - 1)).

    >>> import genesis
    >>> genesis.hamming_window(4, periodic=False)
    tensor([0.0800, 0.7700, 0.7700, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, -beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window, 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).

    >>> import genesis
    >>> genesis.blackman_window(3, periodic=False)
    tensor([-1.3878e-17,  1.0000e+00, -1.3878e-17])
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, -0.5, 0.08))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window, 1 - |2 n / (N - 1) - 1|.

    >>> import genesis
    >>> genesis.bartlett_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, period: 1 - (n * (2 / (period - 1)) - 1).abs())


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window, I0(beta sqrt(1 - (2 n / (N - 1) - 1) ** 2)) / I0(beta).

    >>> import genesis
    >>> genesis.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    def shape(n, period):
        xp = n._device.xp
        ratio = n._data * (2 / (period - 1)) - 1
        return wrap_array(xp.i0(beta * xp.sqrt(xp.maximum(1 - ratio * ratio, 0))) / np.i0(beta),
                          n._device)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, shape)


METHODS: dict = {}
OPS: list = []
