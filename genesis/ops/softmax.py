"""Normalisers along a dimension: softmax, log_softmax, softmin, logsumexp.

All subtract the maximum first, so large inputs don't overflow. A row that is
all -inf gives nan for softmax and log_softmax and -inf for logsumexp, as in
PyTorch. Backwards are fused Functions (SoftmaxGrad, LogSoftmaxGrad) that are
differentiable again, for double backward.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import (accumulated_in_float32, as_floating, ignore_float_errors, normalize_dim,
                        normalize_dims)
from ._softmax_kernels import LOG_SOFTMAX, LOG_SOFTMAX_GRAD, SOFTMAX, SOFTMAX_GRAD
from .registry import OpInfo, Sample

__all__ = ["softmax", "log_softmax", "softmin", "logsumexp"]


def _compute_dtype(data):
    """float16 is normalised in float32 (as PyTorch accumulates it), then cast back."""
    return data.astype(np.float32) if data.dtype.itemsize < 4 else data


class Softmax(Op):
    """exp(x) / sum(exp(x)) along `dim`."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, dim):
        ctx.dim = dim
        x = _compute_dtype(a._data)
        out = SOFTMAX(a._device, x, axis=dim) if x.size else x.copy()
        out = wrap_array(out.astype(a._data.dtype, copy=False), a._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return SoftmaxGrad.apply(grad, out, ctx.dim), None


class SoftmaxGrad(Op):
    """out * (grad - sum(grad * out)), the softmax vector-Jacobian product, fused."""

    @staticmethod
    def forward(ctx, grad, out, dim):
        ctx.dim = dim
        ctx.save_for_backward(grad, out)
        return accumulated_in_float32(lambda g, y: SOFTMAX_GRAD(grad._device, g, y, axis=dim),
                                      grad._data, out._data)

    @staticmethod
    def backward(ctx, grad_grad):
        grad, out = ctx.saved_tensors
        dim = ctx.dim
        needs = ctx.needs_input_grad
        grad_grad_out = grad_out = None
        if needs[0]:
            grad_grad_out = SoftmaxGrad.apply(grad_grad, out, dim)
        if needs[1]:
            grad_out = (grad_grad * (grad - (grad * out).sum(dim=dim, keepdim=True))
                        - grad * (grad_grad * out).sum(dim=dim, keepdim=True))
        return grad_grad_out, grad_out, None


class LogSoftmax(Op):
    """x - log(sum(exp(x))) along `dim`."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, dim):
        ctx.dim = dim
        shifted = LOG_SOFTMAX(a._device, _compute_dtype(a._data), axis=dim)
        out = wrap_array(shifted.astype(a._data.dtype, copy=False), a._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return LogSoftmaxGrad.apply(grad, out, ctx.dim), None


class LogSoftmaxGrad(Op):
    """grad - exp(out) * sum(grad), the log_softmax vector-Jacobian product, fused."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, grad, out, dim):
        ctx.dim = dim
        ctx.save_for_backward(grad, out)
        return accumulated_in_float32(lambda g, y: LOG_SOFTMAX_GRAD(grad._device, g, y, axis=dim),
                                      grad._data, out._data)

    @staticmethod
    def backward(ctx, grad_grad):
        grad, out = ctx.saved_tensors
        dim = ctx.dim
        needs = ctx.needs_input_grad
        probabilities = out.exp()
        grad_grad_out = grad_out = None
        if needs[0]:
            grad_grad_out = grad_grad - (grad_grad * probabilities).sum(dim=dim, keepdim=True)
        if needs[1]:
            grad_out = -grad_grad * probabilities * grad.sum(dim=dim, keepdim=True)
        return grad_grad_out, grad_out, None


class Logsumexp(Op):
    """log(sum(exp(x))) over `dims`, shifted by the (finite part of the) maximum."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, dims, keepdim):
        xp = a._device.xp
        x = _compute_dtype(as_floating(a._data))
        if x.size:
            peak = x.max(axis=dims, keepdims=True)
            peak = xp.where(xp.isinf(peak), 0, peak)  # all -inf (or an inf): don't shift by inf
        else:
            peak = xp.zeros((1,) * x.ndim, x.dtype)
        out = xp.log(xp.exp(x - peak).sum(axis=dims, keepdims=True)) + peak
        if not keepdim:
            out = out.squeeze(axis=dims) if dims else out.reshape(())
        out = wrap_array(out.astype(as_floating(a._data).dtype, copy=False), a._device)
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    @ignore_float_errors  # an all -inf slice gives -inf - -inf = nan, as in PyTorch
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if not ctx.keepdim:
            kept = tuple(1 if ctx.dims is None or index in ctx.dims else extent
                         for index, extent in enumerate(a.shape))
            grad, out = grad.reshape(kept), out.reshape(kept)
        return grad * (a - out).exp(), None, None


def _floating_input(op: str, input: Tensor, dtype) -> Tensor:
    if dtype is not None:
        return input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: needs a floating point tensor, got {input.dtype.name}; pass "
                           "dtype=genesis.float32 or convert first with .float()")
    return input


def _axis(op: str, input: Tensor, dim) -> int | None:
    """The array axis for `dim` (None for a 0-d tensor, which is its own single row).

    dim=None is PyTorch's deprecated implicit choice: 0 for 0-, 1- and 3-d inputs, else 1.
    """
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call "
                      "to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    axis = normalize_dim(dim, input.ndim, op)
    return axis if input.ndim else None


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(input) normalised to sum to 1 along `dim`; `dtype` casts the input first.

    >>> import genesis
    >>> genesis.tensor([[1., 2., 3.]]).softmax(dim=1)
    tensor([[0.0900, 0.2447, 0.6652]])
    """
    input = _floating_input("softmax", input, dtype)
    return Softmax.apply(input, _axis("softmax", input, dim))


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """log(softmax(input, dim)), computed stably; `dtype` casts the input first.

    >>> import genesis
    >>> genesis.tensor([0., 0.]).log_softmax(dim=0)
    tensor([-0.6931, -0.6931])
    """
    input = _floating_input("log_softmax", input, dtype)
    return LogSoftmax.apply(input, _axis("log_softmax", input, dim))


def softmin(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """softmax(-input, dim): the smallest entries get the most weight.

    >>> import genesis
    >>> genesis.softmin(genesis.tensor([1., 2.]), dim=0)
    tensor([0.7311, 0.2689])
    """
    input = _floating_input("softmin", input, dtype)
    return Softmax.apply(-input, _axis("softmin", input, dim))


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input))) over `dim` (an int or a tuple), without overflow.

    Integers give float32. A slice that is all -inf gives -inf.

    >>> import genesis
    >>> genesis.tensor([[1000., 1000.], [0., float("-inf")]]).logsumexp(dim=1)
    tensor([1000.6932,    0.0000])
    """
    if isinstance(dim, tuple | list) and not dim:
        raise RuntimeError("logsumexp: dim must name at least one dimension")
    dims = normalize_dims(dim, input.ndim, "logsumexp")
    if input.ndim == 0:
        dims = None
    return Logsumexp.apply(input, dims, keepdim)


METHODS = {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp}


def _normaliser_samples(rng):
    cases = [Sample((samples.values(rng, (3, 4)),), {"dim": dim}, note=f"dim {dim}")
             for dim in (0, 1, -1)]
    return cases + [
        Sample((samples.values(rng, (2, 3, 4)),), {"dim": 1}, layout="transposed",
               note="transposed"),
        Sample((samples.values(rng, (2, 5)),), {"dim": 1}, layout="strided", note="strided"),
        Sample((samples.values(rng, ()),), {"dim": 0}, note="0-d"),
        Sample((samples.values(rng, (0, 3)),), {"dim": 1}, note="zero-size"),
        Sample((100 * samples.values(rng, (3, 4)),), {"dim": 1}, note="large values"),
    ]


def _logsumexp_samples(rng):
    return _normaliser_samples(rng) + [
        Sample((samples.values(rng, (3, 4, 2)),), {"dim": (0, 2)}, note="two dims"),
        Sample((samples.values(rng, (3, 4)),), {"dim": 1, "keepdim": True}, note="keepdim"),
    ]


OPS = [
    OpInfo("softmax", softmax, _normaliser_samples,
           torch=lambda torch, a, dim: torch.softmax(a, dim)),
    OpInfo("log_softmax", log_softmax, _normaliser_samples,
           torch=lambda torch, a, dim: torch.log_softmax(a, dim)),
    OpInfo("softmin", softmin, _normaliser_samples,
           torch=lambda torch, a, dim: torch.nn.functional.softmin(a, dim)),
    OpInfo("logsumexp", logsumexp, _logsumexp_samples,
           torch=lambda torch, a, **kw: torch.logsumexp(a, **kw)),
]
