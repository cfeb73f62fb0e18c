"""Householder QR in LAPACK's compact form, as PyTorch's: `geqrf` (the reflectors below the
diagonal of one matrix, R on and above it, and their scales tau; no gradient, as in
PyTorch) and `householder_product` (alias `orgqr`: the first n columns of
H_1 H_2 ... H_k, each H_i = I - tau_i v_i v_i^T), which is a composition of genesis ops and
so differentiable in both arguments.

>>> import genesis
>>> a = genesis.tensor([[3., 1.], [4., 2.], [0., 5.]], dtype=genesis.float64)
>>> h, tau = geqrf(a)
>>> q = householder_product(h, tau)
>>> bool(((q @ h.triu()[:2] - a).abs() < 1e-12).all())  # A = QR
True
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.grad_mode import no_grad
from ..creation import eye, ones, zeros
from ..tensor import Tensor, wrap_array
from .join import cat
from .registry import OpInfo, Sample

__all__ = ["geqrf", "householder_product", "orgqr"]

geqrf_result = namedtuple("geqrf", ("a", "tau"))


def geqrf(input: Tensor) -> tuple:
    """(a, tau): the QR of each matrix of `input` (..., m, n) as Householder reflectors
    (below a's diagonal) with scales tau (..., min(m, n)), and R (a's upper triangle)."""
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    if input.ndim < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions, got {input.ndim}")
    with no_grad():
        data = np.asarray(input._host_array())
        batch, (m, n) = data.shape[:-2], data.shape[-2:]
        flat = data.reshape((-1, m, n))
        a = np.empty_like(flat)
        tau = np.empty((flat.shape[0], min(m, n)), dtype=data.dtype)
        for index, matrix in enumerate(flat):
            h, t = np.linalg.qr(matrix, mode="raw")
            a[index], tau[index] = h.T, t
        device = input._device
        return geqrf_result(wrap_array(device.xp.asarray(a.reshape(data.shape)), device),
                            wrap_array(device.xp.asarray(tau.reshape(batch + (min(m, n),))), device))


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of the product of the Householder reflectors stored below the
    diagonal of A (..., m, n) with scales tau (..., k), k <= n <= m."""
    A, tau = autocast_inputs(FLOAT32_ON_CPU, A, tau)
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    batch = tuple(A.shape[:-2])
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(*batch, m, n)
    for i in reversed(range(k)):
        v = cat([zeros(*batch, i, dtype=A.dtype, device=A.device),
                 ones(*batch, 1, dtype=A.dtype, device=A.device), A[..., i + 1:, i]], dim=-1)
        Q = Q - tau[..., i, None, None] * v.unsqueeze(-1) @ (v.unsqueeze(-2) @ Q)
    return Q


orgqr = householder_product


METHODS: dict = {}


def _v(rng, shape):
    return rng.uniform(-1, 1, shape)


OPS = [
    OpInfo("householder_product", householder_product, lambda rng: [
        Sample((_v(rng, (4, 3)), _v(rng, (3,))), note="4x3, k=3"),
        Sample((_v(rng, (2, 5, 3)), _v(rng, (2, 2))), note="batch, k=2"),
        Sample((_v(rng, (3, 3)), _v(rng, (1,))), grad=(True, False), note="square, k=1")],
        torch=lambda torch, a, tau: torch.linalg.householder_product(a, tau)),
]
