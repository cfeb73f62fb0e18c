"""Ops written as compositions of other genesis ops, as PyTorch offers them: their gradients
are those of the ops they are made of (the registry entries below check them like any op).

Stacking (`hstack`, `vstack`, `dstack`, `column_stack`, `row_stack`, `atleast_1d/2d/3d`),
broadcasting (`broadcast_tensors`, `broadcast_shapes`, `meshgrid`), differences and
distances (`diff`, `cdist`), `tensordot`, `take`, `repeat_interleave`, `nan_to_num`,
`logit`, `xlogy`, `median`; and the integer-valued `count_nonzero`, `bincount`, `unique`,
`tril_indices`, `triu_indices`.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32, AutocastRule
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..autograd.function import Op
from ..creation import tensor as make_tensor
from ..dtypes import finfo, int64
from ..tensor import Tensor, wrap_array
from . import samples
from ._no_derivative import without_derivative
from ._operands import as_floating, float_operands, ignore_float_errors, normalize_dim
from .einsum import einsum
from .gather import gather
from .join import cat
from .registry import OpInfo, Sample
from .sorting import sort
from .where import where

__all__ = ["hstack", "vstack", "dstack", "column_stack", "row_stack", "atleast_1d", "atleast_2d",
           "atleast_3d", "broadcast_tensors", "broadcast_shapes", "meshgrid", "diff", "gradient", "cdist",
           "tensordot", "take", "repeat_interleave", "nan_to_num", "logit", "xlogy", "median",
           "count_nonzero", "bincount", "unique", "tril_indices", "triu_indices"]

median_result = namedtuple("median", ("values", "indices"))


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,))."""
    shaped = [t.reshape(1) if t.ndim == 0 else t for t in _flat(tensors)]
    return shaped[0] if len(shaped) == 1 else tuple(shaped)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (leading 1s added)."""
    shaped = [t.reshape((1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t for t in _flat(tensors)]
    return shaped[0] if len(shaped) == 1 else tuple(shaped)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    def shaped(t):
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t
    result = [shaped(t) for t in _flat(tensors)]
    return result[0] if len(result) == 1 else tuple(result)


def _flat(tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        return list(tensors[0])
    return list(tensors)


def hstack(tensors) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors).

    >>> import genesis
    >>> hstack([genesis.tensor([1, 2]), genesis.tensor([3])]).tolist()
    [1, 2, 3]
    """
    tensors = atleast_1d(*tensors) if len(tensors) > 1 else (atleast_1d(*tensors),)
    return cat(list(tensors), 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Stack as rows: concatenate along dim 0 after making each at least 2-D."""
    shaped = atleast_2d(*tensors)
    return cat(list(shaped) if isinstance(shaped, tuple) else [shaped], 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """Concatenate along dim 2 after making each at least 3-D."""
    shaped = atleast_3d(*tensors)
    return cat(list(shaped) if isinstance(shaped, tuple) else [shaped], 2)


def column_stack(tensors) -> Tensor:
    """Stack as columns: 1-D (and 0-d) tensors become columns, then concatenate along dim 1."""
    columns = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors]
    return cat(columns, 1)


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        return tuple(np.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))
    except ValueError as error:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape "
                           f"({', '.join(map(str, shapes))}): {error}") from None


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded (as views) to their common shape."""
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors: "ij" (matrix) or "xy" (Cartesian) indexing; PyTorch
    defaults to "ij".

    >>> import genesis
    >>> [g.tolist() for g in meshgrid(genesis.tensor([1, 2]), genesis.tensor([3, 4, 5]), indexing="ij")]
    [[[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]]]
    """
    tensors = _flat(tensors)
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.ndim > 1 for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to be 0-D or 1-D")
    vectors = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(vectors) >= 2
    if swap:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v.shape[0] for v in vectors)
    grids = [v.reshape((1,) * k + (-1,) + (1,) * (len(vectors) - k - 1)).expand(*shape)
             for k, v in enumerate(vectors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `dim` (with `prepend`/`append` joined first).

    >>> import genesis
    >>> diff(genesis.tensor([1, 4, 9, 16])).tolist(), diff(genesis.tensor([1, 4, 9, 16]), n=2).tolist()
    ([3, 5, 7], [2, 2])
    """
    dim = normalize_dim(dim, input.ndim, "diff")
    pieces = [p for p in (prepend, input, append) if p is not None]
    out = cat(pieces, dim) if len(pieces) > 1 else input
    for _ in range(n):
        extent = out.shape[dim]
        if extent == 0:
            break
        out = out.narrow(dim, 1, extent - 1) - out.narrow(dim, 0, extent - 1)
    return out


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """Estimates of the derivative of `input` along each of `dim` (all dims by default) by
    central differences inside and one-sided ones (first or second order) at the edges, as
    numpy.gradient; `spacing` is one step for all dims, a step per dim, or per dim a 1-D
    tensor of coordinates. Differentiable in `input`.

    >>> import genesis
    >>> gradient(genesis.tensor([0., 1., 4., 9., 16.]))[0].tolist()
    [1.0, 2.0, 4.0, 6.0, 7.0]
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, input.ndim, "gradient") for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            where = (f"'self.dim() = {input.ndim}', since dim argument was not given"
                     if dim is None else f"'len(dim) = {len(dims)}'")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                               f"list of length equal to {where}, but got a list of length "
                               f"{len(spacing)}")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    values = input if input.is_floating_point() else input.float()
    return tuple(_gradient_along(values, d, step, edge_order) for d, step in zip(dims, steps))


def _gradient_along(f: Tensor, dim: int, step, edge_order: int) -> Tensor:
    n = f.shape[dim]

    def at(start, length):
        return f.narrow(dim, start, length)

    def along(coefficient: Tensor) -> Tensor:  # a 1-D coefficient broadcast along `dim`
        return coefficient.reshape((-1,) + (1,) * (f.ndim - dim - 1))

    if not isinstance(step, Tensor):
        h = float(step)
        inside = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1, 1) - at(0, 1)) / h, (at(n - 1, 1) - at(n - 2, 1)) / h
        else:
            first = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
            last = (0.5 * at(n - 3, 1) - 2 * at(n - 2, 1) + 1.5 * at(n - 1, 1)) / h
        return cat([first, inside, last], dim)
    x = step.to(f.dtype)
    dx = x[1:] - x[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inside = along(a) * at(0, n - 2) + along(b) * at(1, n - 2) + along(c) * at(2, n - 2)
    if edge_order == 1:
        first = (at(1, 1) - at(0, 1)) / dx[0]
        last = (at(n - 1, 1) - at(n - 2, 1)) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * at(0, 1) + (d1 + d2) / (d1 * d2) * at(1, 1)
                 - d1 / (d2 * (d1 + d2)) * at(2, 1))
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d1 + d2)) * at(n - 3, 1) - (d2 + d1) / (d1 * d2) * at(n - 2, 1)
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * at(n - 1, 1))
    return cat([first, inside, last], dim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The p-norm distances between each row of x1 (..., P, M) and each row of x2 (..., R, M),
    shape (..., P, R)."""
    x1, x2 = autocast_inputs(FLOAT32, x1, x2)
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (differences != 0).sum(-1).to(x1.dtype)
    if p == float("inf"):
        return differences.abs().amax(-1)
    return differences.norm(p, -1)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Sum over the last `dims` dims of a and the first `dims` of b (or the listed pairs)."""
    if isinstance(dims, int):
        dims_a = list(range(a.ndim - dims, a.ndim))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a = [normalize_dim(d, a.ndim, "tensordot") for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim, "tensordot") for d in dims_b]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    names_a = [next(letters) for _ in range(a.ndim)]
    names_b = [next(letters) for _ in range(b.ndim)]
    for da, db in zip(dims_a, dims_b):
        names_b[db] = names_a[da]
    kept = [n for i, n in enumerate(names_a) if i not in dims_a] + \
        [n for i, n in enumerate(names_b) if i not in dims_b]
    a, b = autocast_inputs(_TENSORDOT, a, b)
    with outside_autocast():
        return einsum(f"{''.join(names_a)},{''.join(names_b)}->{''.join(kept)}", a, b)


# PyTorch's CUDA autocast promotes tensordot's operands; its CPU autocast lowers the matrix
# product tensordot is made of
_TENSORDOT = AutocastRule("promote", "lower")


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at `index` (any shape)."""
    flat = input.reshape(-1)
    return flat[index.reshape(-1)].reshape(tuple(index.shape))


def repeat_interleave(input, repeats=None, dim: int | None = None, *, output_size=None) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times (a number, or one count per
    element); `repeat_interleave(counts)` gives each index its count times.

    >>> import genesis
    >>> repeat_interleave(genesis.tensor([1, 2]), 2).tolist(), repeat_interleave(genesis.tensor([2, 1])).tolist()
    ([1, 1, 2, 2], [0, 0, 1])
    """
    if repeats is None:  # repeat_interleave(counts)
        counts = input
        return wrap_array(counts._device.xp.repeat(counts._device.xp.arange(counts.shape[0]),
                                                   counts._data), counts._device)
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = normalize_dim(dim, input.ndim, "repeat_interleave")
    counts = repeats.tolist() if isinstance(repeats, Tensor) else repeats  # (host numbers, any device)
    index = np.repeat(np.arange(input.shape[dim]), np.asarray(counts).reshape(-1) if
                      np.ndim(counts) else counts)
    return input.index_select(dim, make_tensor(index, dtype=int64, device=input._device))


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (default: the dtype's
    largest and smallest values); the gradient passes where nothing was replaced."""
    if not input.is_floating_point():
        return input.clone()
    info = finfo(input.dtype)  # (genesis's: NumPy's does not know bfloat16)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    data = input._data
    xp = input._device.xp
    out = where(wrap_array(xp.isnan(data), input._device), nan, input)
    out = where(wrap_array(data == np.inf, input._device), posinf, out)
    return where(wrap_array(data == -np.inf, input._device), neginf, out)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given.

    >>> import genesis
    >>> genesis.logit(genesis.tensor([0.5, 0.0]))
    tensor([0., -inf])
    """
    return Logit.apply(input, eps)


class Logit(Op):
    """log(p / (1 - p)) (p clamped to [eps, 1 - eps] with an eps), with PyTorch's gradient
    g / (x (1 - x)): inf at 0 and 1 (the limit, where the quotient's rule gave 0 * inf),
    nan outside [0, 1], and 0 outside [eps, 1 - eps] with an eps (the clamp's)."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, input, eps):
        xp = input._device.xp
        p = as_floating(input._data)
        if eps is not None:
            p = xp.clip(p, eps, 1 - eps)
        ctx.save_for_backward(input)
        ctx.eps = eps
        return xp.log(p / (1 - p))

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        low, high = (0.0, 1.0) if ctx.eps is None else (ctx.eps, 1 - ctx.eps)
        inside = wrap_array((x._data >= low) & (x._data <= high), x._device)
        outside = math.nan if ctx.eps is None else 0.0
        return where(inside, grad / (x * (1 - x)), outside), None


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input is 0 (even where other is 0); NaN where other is.

    >>> import genesis
    >>> genesis.xlogy(genesis.tensor([0., 2.]), genesis.tensor([0., 1.]))
    tensor([0., 0.])
    """
    x = input if isinstance(input, Tensor) else make_tensor(input, device=other._device)
    y = other if isinstance(other, Tensor) else make_tensor(float(other), device=x._device)
    return Xlogy.apply(x, y)


class Xlogy(Op):
    """x log(y), 0 where x is 0, nan where y is; PyTorch's gradients: xlogy(g, y) for x (0
    where x is 0 and y <= 0) and g x / y for y (nan at x = y = 0)."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, input, other):
        xp = input._device.xp
        x, y = float_operands(input, other, "xlogy")
        ctx.save_for_backward(input, other)
        return xp.where(y != y, y, xp.where(x == 0, 0, x * xp.log(y)))

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        needs = ctx.needs_input_grad
        to_x = xlogy(grad, y).masked_fill((x == 0) & (y <= 0), 0.0) if needs[0] else None
        to_y = grad * x / y if needs[1] else None
        return to_x, to_y


class TiedValue(Op):
    """`value`, an element of `input` picked by a full reduction (median, nanmedian), as a
    0-d result whose gradient is shared evenly by every element equal to it (every NaN for
    a NaN), as PyTorch shares it among ties."""

    @staticmethod
    def forward(ctx, input, value):
        data, picked = input._data, value._data
        xp = input._device.xp
        ties = (data == picked) | (xp.isnan(data) & xp.isnan(picked))
        ctx.share = wrap_array((ties / max(int(ties.sum()), 1)).astype(data.dtype), input._device)
        return picked.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.share, None


def median(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median: of all elements (a 0-d tensor), or along `dim` the named tuple
    (values, indices); NaN where there is a NaN (`nanmedian` skips them). The gradient of
    the full median is shared by the elements equal to it; along `dim`, it goes to the
    element at `indices`.

    >>> import genesis
    >>> median(genesis.tensor([3., 1., 4., 2.])).item()
    2.0
    """
    flat = dim is None
    source = input.reshape(-1) if flat else input
    axis = 0 if flat else normalize_dim(dim, max(input.ndim, 1), "median")
    if source.ndim == 0:
        source = source.reshape(1)
    ordered = sort(source, axis)  # NaN sorts last: a row with one has its first NaN picked
    xp = input._device.xp
    extent = source.shape[axis]
    if source.is_floating_point():
        kept = (~xp.isnan(source._data)).sum(axis=axis, keepdims=True)
    else:
        kept = xp.full(source.shape[:axis] + (1,) + source.shape[axis + 1:], extent)
    position = wrap_array(xp.where(kept < extent, kept, (extent - 1) // 2), input._device)
    values = gather(ordered.values, axis, position)
    if flat:
        return TiedValue.apply(input, values.reshape(()).detach())
    indices = gather(ordered.indices, axis, position)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return median_result(values, indices)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """How many elements are not zero (over `dim`, an int or tuple, or all)."""
    return wrap_array(input._device.xp.asarray(input._device.xp.count_nonzero(
        input._data, axis=dim), dtype=np.int64), input._device)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How many times each value 0, 1, ... occurs in the 1-D non-negative int tensor (summed
    `weights` instead, when given)."""
    if input.ndim != 1 or input._data.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input._data.size and int(input._data.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    xp = input._device.xp
    counted = xp.bincount(input._data, None if weights is None else weights._data, minlength)
    return wrap_array(counted if weights is not None else counted.astype(np.int64), input._device)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None):
    """The distinct values (sorted), with the inverse indices and counts when asked."""
    xp = input._device.xp
    if dim is None:
        values, inverse, counts = xp.unique(input._data, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(input.shape)
    else:
        values, inverse, counts = xp.unique(input._data, return_inverse=True, return_counts=True,
                                            axis=normalize_dim(dim, input.ndim, "unique"))
        inverse = inverse.reshape(-1)
    result = [without_derivative(input, values, "unique")]
    if return_inverse:
        result.append(wrap_array(inverse.astype(np.int64), input._device))
    if return_counts:
        result.append(wrap_array(counts.astype(np.int64), input._device))
    return result[0] if len(result) == 1 else tuple(result)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a row x col matrix."""
    rows, cols = np.tril_indices(row, offset, col)
    return make_tensor(np.stack([rows, cols]), dtype=dtype or int64, device=device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle of a row x col matrix."""
    rows, cols = np.triu_indices(row, offset, col)
    return make_tensor(np.stack([rows, cols]), dtype=dtype or int64, device=device)


METHODS = {"diff": diff, "take": take, "repeat_interleave": repeat_interleave,
           "nan_to_num": nan_to_num, "logit": logit, "xlogy": xlogy, "median": median,
           "count_nonzero": count_nonzero, "bincount": bincount, "unique": unique,
           "tensordot": tensordot}


def _values(rng, shape):
    return samples.values(rng, shape)


def _many(fn):
    return lambda *args: fn(list(args))


OPS = [
    OpInfo("hstack", _many(hstack), lambda rng: [
        Sample((_values(rng, (2, 3)), _values(rng, (2, 1))), note="2-D"),
        Sample((_values(rng, (3,)), _values(rng, (2,))), note="1-D")],
        torch=lambda torch, *a: torch.hstack(a)),
    OpInfo("vstack", _many(vstack), lambda rng: [
        Sample((_values(rng, (2, 3)), _values(rng, (1, 3))), note="2-D"),
        Sample((_values(rng, (3,)), _values(rng, (3,))), note="1-D")],
        torch=lambda torch, *a: torch.vstack(a)),
    OpInfo("dstack", _many(dstack), lambda rng: [
        Sample((_values(rng, (2, 3)), _values(rng, (2, 3))), note="2-D")],
        torch=lambda torch, *a: torch.dstack(a)),
    OpInfo("column_stack", _many(column_stack), lambda rng: [
        Sample((_values(rng, (3,)), _values(rng, (3, 2))), note="1-D and 2-D")],
        torch=lambda torch, *a: torch.column_stack(a)),
    OpInfo("diff", diff, lambda rng: [
        Sample((_values(rng, (3, 5)),), note="last dim"),
        Sample((_values(rng, (4, 3)), 2, 0), note="n=2 dim 0"),
        Sample((_values(rng, (3, 4)), 1, 1, _values(rng, (3, 1))), note="prepend")],
        torch=lambda torch, *a: torch.diff(*a)),
    OpInfo("cdist", cdist, lambda rng: [
        Sample((_values(rng, (3, 2)), _values(rng, (4, 2))), note="p=2"),
        Sample((_values(rng, (2, 3, 2)), _values(rng, (2, 4, 2)), 1.0), note="batched p=1"),
        Sample((_values(rng, (3, 2)), _values(rng, (2, 2)), 3.0), note="p=3")],
        torch=lambda torch, *a: torch.cdist(*a)),
    OpInfo("tensordot", tensordot, lambda rng: [
        Sample((_values(rng, (2, 3, 4)), _values(rng, (3, 4, 5))), note="dims 2"),
        Sample((_values(rng, (2, 3)), _values(rng, (3, 2)), ([1], [0])), note="pairs")],
        torch=lambda torch, *a: torch.tensordot(*a)),
    OpInfo("repeat_interleave", repeat_interleave, lambda rng: [
        Sample((_values(rng, (2, 3)), 2), note="flattened"),
        Sample((_values(rng, (2, 3)), 2, 1), note="dim 1")],
        torch=lambda torch, *a: torch.repeat_interleave(*a)),
    OpInfo("logit", logit, lambda rng: [
        Sample((rng.uniform(0.1, 0.9, (3, 4)),), note="in (0, 1)"),
        Sample((rng.uniform(0.1, 0.9, (3, 4)), 0.2), note="eps")],
        torch=lambda torch, *a: torch.logit(*a)),
    OpInfo("xlogy", xlogy, lambda rng: [
        Sample((_values(rng, (3, 4)), rng.uniform(0.5, 2.0, (3, 4))), note="positive y"),
        Sample((_values(rng, (3, 4)), rng.uniform(0.5, 2.0, (4,))), note="broadcast")],
        torch=lambda torch, *a: torch.xlogy(*a)),
    OpInfo("median_dim", lambda *a, **k: median(*a, **k).values, lambda rng: [
        Sample((_values(rng, (3, 5)), 1), note="odd"), Sample((_values(rng, (4, 3)), 0), note="even"),
        Sample((_values(rng, (3, 4)), -1, True), note="keepdim")], kinks="ties",
        torch=lambda torch, *a, **k: torch.median(*a, **k).values),
    OpInfo("median", median, lambda rng: [Sample((_values(rng, (3, 4)),), note="all")],
           kinks="ties", torch=lambda torch, a: torch.median(a)),
    OpInfo("nan_to_num", nan_to_num, lambda rng: [
        Sample((_values(rng, (3, 4)),), note="finite"),
        Sample((_values(rng, (3, 4)), 0.0, 5.0, -5.0), note="with replacements")],
        torch=lambda torch, *a: torch.nan_to_num(*a)),
]
