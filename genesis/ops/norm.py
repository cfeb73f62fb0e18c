"""Vector norms: `norm` (PyTorch's torch.norm) and `vector_norm` (torch.linalg.vector_norm).

Gradients follow PyTorch at the kinks: zero where the norm is zero, zero at
zero elements for p <= 1, and for the inf/-inf norms an even split among the
elements tied for the largest/smallest magnitude.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import accumulated_in_float32, normalize_dim, normalize_dims, saved_with_input
from .extrema import tie_weights, unreduced_array
from .gradient_rules import nonzero_divisor
from .reduce import unreduced
from .registry import OpInfo, Sample

__all__ = ["norm", "vector_norm"]


class VectorNorm(Op):
    """(sum |a|^p)^(1/p) over `dims`; p = inf/-inf is the largest/smallest magnitude, p = 0
    the count of nonzero elements."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    def forward(ctx, a, p, dims, keepdim):
        xp = a._device.xp
        x = a._data
        if p == 2:
            out = accumulated_in_float32(lambda x: xp.sqrt((x * x).sum(axis=dims, keepdims=keepdim)), x)
        elif p == 1:
            out = accumulated_in_float32(lambda x: xp.abs(x).sum(axis=dims, keepdims=keepdim), x)
        elif p == math.inf or p == -math.inf:
            reduce = xp.amax if p > 0 else xp.amin
            magnitude = xp.abs(x)
            out = reduce(magnitude, axis=dims, keepdims=keepdim)
            if ctx.needs_input_grad[0]:
                kept = unreduced_array(out, a.shape, dims, keepdim)
                ctx.weights = xp.sign(x) * tie_weights(xp, magnitude, kept, dims)
        elif p == 0:
            out = (x != 0).sum(axis=dims, keepdims=keepdim, dtype=x.dtype)
        else:
            with np.errstate(divide="ignore"):  # p < 0: |0| ** p = inf, and inf ** (1/p) = 0
                out = accumulated_in_float32(
                    lambda x: (xp.abs(x) ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p), x)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        return saved_with_input(ctx, a, out)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        p, dims, keepdim = ctx.p, ctx.dims, ctx.keepdim
        grad = unreduced(grad, a.shape, dims, keepdim)
        if p == 2:
            return grad * a / unreduced(nonzero_divisor(out), a.shape, dims, keepdim), None, None, None
        if p == 1:
            return grad * _sign(a), None, None, None
        if p == math.inf or p == -math.inf:
            return grad * wrap_array(ctx.weights, a._device), None, None, None
        if p == 0:
            return wrap_array(a._device.xp.zeros_like(a._data), a._device), None, None, None
        # sign(a) |a|^(p-1) / norm^(p-1), zero at a == 0 (for p < 1, |a|^(p-1) is infinite
        # there) and where the norm is zero.
        zero = wrap_array((a._data == 0).astype(a._data.dtype), a._device)
        sign = _sign(a)
        scaled = sign * (a * sign + zero) ** (p - 1)
        scale = _over_power(grad, unreduced(out, a.shape, dims, keepdim), p - 1)
        return scaled * scale, None, None, None


def _over_power(grad: Tensor, norm: Tensor, power: float) -> Tensor:
    """grad / norm ** power, and 0 where the norm is 0 (kept finite, so a double backward
    sees no inf * 0 there either)."""
    zero = norm._data == 0
    if not zero.any():
        return grad / norm ** power
    device, dtype = norm._device, norm._data.dtype
    safe = norm + wrap_array(zero.astype(dtype), device)
    return grad / safe ** power * wrap_array((~zero).astype(dtype), device)


def _sign(a: Tensor) -> Tensor:
    """sign(a) as a constant (its derivative is zero almost everywhere)."""
    return wrap_array(a._device.xp.sign(a._data), a._device)


def _order(op: str, p) -> float:
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        raise ValueError(f"{op}: p={p!r} is not supported; use a number, inf, -inf or 'fro' "
                         "('nuc' needs a singular value decomposition genesis doesn't have)")
    if isinstance(p, bool) or not isinstance(p, int | float):
        raise TypeError(f"{op}: the order must be a number or 'fro', got {type(p).__name__}")
    return float(p)


def vector_norm(input: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The `ord`-norm of `input` viewed as a vector over `dim` (all dims when None).

    `ord` is any number (2 by default), `inf` (largest magnitude), `-inf`
    (smallest) or 0 (count of nonzeros). `dtype` casts the input first.

    >>> import genesis
    >>> genesis.vector_norm(genesis.tensor([3., -4.]))
    tensor(5.)
    >>> genesis.vector_norm(genesis.tensor([3., -4.]), ord=float("inf"))
    tensor(4.)
    """
    return _vector_norm("vector_norm", input, _order("vector_norm", ord), dim, keepdim, dtype)


def _vector_norm(op: str, input: Tensor, p: float, dim, keepdim: bool, dtype) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"{op}: input dtype must be floating point, got {input.dtype!r}; "
                           f"use t.float().{op}() or pass dtype=")
    dims = normalize_dims(dim, input.ndim, op)
    if (p == math.inf or p == -math.inf) and input._data.size == 0:
        raise RuntimeError(f"{op}: the {p} norm of a tensor with no elements (shape "
                           f"{tuple(input.shape)}) is undefined")
    return VectorNorm.apply(input, p, dims, bool(keepdim))


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The p-norm over `dim` (all elements when None); 'fro' (the default) is the 2-norm.

    Like PyTorch's `torch.norm`, this is a vector norm over the given dims:
    `p` may be any number, `inf`, `-inf` or 'fro'. The gradient is zero where
    the norm is zero.

    >>> import genesis
    >>> x = genesis.tensor([[3., 4.], [0., 0.]], requires_grad=True)
    >>> x.norm(dim=1)
    tensor([5., 0.], grad_fn=<VectorNormBackward0>)
    >>> x.norm(dim=1).sum().backward(); x.grad
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    """
    return _vector_norm("norm", input, _order("norm", p), dim, keepdim, dtype)


def matrix_norm(input: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """`torch.linalg.matrix_norm` over the two `dim`s: 'fro'; 1 / -1, the largest / smallest
    column sum of |A|; inf / -inf, the largest / smallest row sum. (2, -2 and 'nuc' need
    singular values, which genesis does not compute.)

    >>> import genesis
    >>> genesis.linalg.matrix_norm(genesis.tensor([[1., -2.], [3., 4.]]), ord=1)
    tensor(6.)
    """
    op = "linalg.matrix_norm"
    if not isinstance(dim, list | tuple) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a pair of dims, got {dim!r}")
    rows, columns = (normalize_dim(d, input.ndim, op) for d in dim)  # in the order given
    if rows == columns:
        raise RuntimeError(f"{op}: dim must name two different dims, got {tuple(dim)}")
    if ord == "fro":
        return _vector_norm(op, input, 2.0, (rows, columns), keepdim, dtype)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{op}: ord={ord!r} is not supported; use 'fro', 1, -1, inf or -inf "
                           "(2, -2 and 'nuc' need singular values, which genesis does not compute)")
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        raise RuntimeError(f"{op}: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float() or pass dtype=")
    summed_over, reduced_over = (rows, columns) if ord in (1, -1) else (columns, rows)
    sums = input.abs().sum(summed_over, keepdim=True)
    extreme = sums.amax if ord > 0 else sums.amin
    out = extreme(reduced_over, keepdim=True)
    return out if keepdim else out.squeeze((rows, columns))


METHODS = {"norm": norm}


def _norm_samples(rng):
    away = samples.away_from

    def sample(*args, shape=(3, 4), layout="contiguous", make=away, **kwargs):
        return Sample((make(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return [
        sample(), sample(2, 1), sample(2, (0, 1), True), sample("fro", -1, layout="transposed"),
        sample(1), sample(1, 0, keepdim=True), sample(math.inf), sample(-math.inf, 1),
        sample(3), sample(0.5, 1), sample(1.5, layout="strided", shape=(2, 3)), sample(-1.0, 0),
        sample(shape=()), sample(2, 1, shape=(0, 3)), sample(3, shape=(2, 0)),
        sample(2, 1, shape=(3, 4), make=lambda rng, shape: away(rng, shape) * [1, 1, 1, 0]),
    ]


def _torch_norm(torch, a, p="fro", dim=None, keepdim=False):
    return torch.norm(a, p, dim, keepdim)


def _zero_norm_samples(rng):
    """A zero row: the norm is 0 there and its gradient is 0 (PyTorch's convention)."""
    return [Sample((samples.away_from(rng, (3, 4)) * [[1], [0], [1]], p, 1), note=f"zero row, p={p}")
            for p in (2, 3, 1.5, 0.5)]


OPS = [
    OpInfo("norm", norm, _norm_samples, torch=_torch_norm, kinks="zero elements for p <= 1"),
    OpInfo("norm_zero_rows", norm, _zero_norm_samples, torch=_torch_norm),
    OpInfo("vector_norm", vector_norm, lambda rng: [
        Sample((samples.away_from(rng, (3, 4)),), note="default"),
        Sample((samples.away_from(rng, (3, 4)), 3, (0, 1)), note="ord 3 over both"),
        Sample((samples.away_from(rng, (4, 3)), math.inf, 0, True), layout="transposed",
               note="inf, transposed")],
        torch=lambda torch, a, *args: torch.linalg.vector_norm(a, *args)),
    OpInfo("matrix_norm", matrix_norm, lambda rng: [
        Sample((samples.away_from(rng, (3, 4)),), note="fro"),
        Sample((samples.away_from(rng, (2, 3, 4)), 1), note="max column sum, batched"),
        Sample((samples.away_from(rng, (2, 3, 4)), -1, (2, 0), True), note="min, dims (2, 0)"),
        Sample((samples.away_from(rng, (4, 3)), math.inf), layout="transposed", note="inf"),
        Sample((samples.away_from(rng, (3, 2, 4)), -math.inf, (0, 2)), note="-inf, dims (0, 2)")],
        torch=lambda torch, a, *args: torch.linalg.matrix_norm(a, *args),
        kinks="ties between the largest sums"),
]
