"""Reductions: sum, mean, prod, var, std; each gradient spreads back over the reduced dims.

max/min/amax/amin/argmax/argmin live in `extrema.py`, norms in `norm.py`,
cumulative sums and products in `cumulative.py`.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..dtypes import get_dtype
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim, normalize_dims, saved_with_input
from .broadcast import Expand, broadcast_view
from .join import cat
from .registry import OpInfo, Sample

__all__ = ["sum", "mean", "prod", "var", "std"]


def kept_shape(shape: tuple, dims) -> tuple:
    """`shape` with the reduced `dims` (None: all) set to 1, i.e. the keepdim result shape."""
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if index in dims else extent for index, extent in enumerate(shape))


def spread(grad: Tensor, shape: tuple, dims, keepdim: bool) -> Tensor:
    """Broadcast the gradient of a reduction back to the input's shape (a read-only view)."""
    if dims is not None:  # reduced dims back as 1s (a full reduction's broadcasts as it is)
        grad = unreduced(grad, shape, dims, keepdim)
    if grad_state.enabled:
        return Expand.apply(grad, shape)
    # A plain backward (no create_graph) records nothing: the view itself is the gradient.
    return wrap_array(broadcast_view(grad._data, shape, grad._device.xp), grad._device)


class Sum(Op):
    """Sum over `dims` (None: all elements)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return a._data.sum(axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return spread(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Op):
    """Mean over `dims` (None: all elements)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        _require_floating(a, "mean")
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return a._data.mean(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        count = reduced_count(ctx.shape, ctx.dims)  # divided before spreading: fewer divisions
        return spread(grad / count, ctx.shape, ctx.dims, ctx.keepdim), None, None


class Prod(Op):
    """Product over one dim (None: all elements).

    The gradient is the product of the other elements: `out / a` when no input is
    zero, else an exact product of exclusive cumulative products (no division).
    """

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        ctx.dim, ctx.keepdim = dim, keepdim
        out = a._data.prod(axis=dim, keepdims=keepdim, dtype=dtype)
        return saved_with_input(ctx, a, out)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        dims = None if ctx.dim is None else (ctx.dim,)
        grad = unreduced(grad, a.shape, dims, ctx.keepdim)
        if not (a._data == 0).any():
            return grad * unreduced(out, a.shape, dims, ctx.keepdim) / a, None, None, None
        if ctx.dim is None:
            others = product_of_others(a.reshape(-1), 0).reshape(a.shape)
        else:
            others = product_of_others(a, ctx.dim)
        return grad * others, None, None, None


def product_of_others(a: Tensor, dim: int) -> Tensor:
    """For each element, the product of the other elements along `dim`, without dividing
    (exact when some are zero, and differentiable again)."""
    before = exclusive_cumprod(a, dim)
    after = exclusive_cumprod(a.flip(dim), dim).flip(dim)
    return before * after


def exclusive_cumprod(a: Tensor, dim: int) -> Tensor:
    """Along `dim`, the product of the elements strictly before each one (1 for the first)."""
    extent = a.shape[dim]
    ones = wrap_array(a._device.xp.ones(a.shape[:dim] + (1,) + a.shape[dim + 1:], a._data.dtype),
                      a._device)
    return cat([ones, a.narrow(dim, 0, extent - 1)], dim).cumprod(dim) if extent else a


def unreduced(grad: Tensor, shape: tuple, dims, keepdim: bool) -> Tensor:
    """A reduction's result (or gradient) with the reduced dims put back as size 1."""
    if keepdim or grad.ndim == len(shape):
        return grad
    return grad.reshape(kept_shape(shape, dims))


def reduced_count(shape: tuple, dims) -> int:
    """How many elements each output of a reduction over `dims` (None: all) combines."""
    count = 1
    for index, extent in enumerate(shape):
        if dims is None or index in dims:
            count *= extent
    return count


def _prepare_spread(ctx, a: Tensor, dims, correction, keepdim: bool, op: str) -> None:
    """What var and std keep for backward: the dims, keepdim and the divisor count - correction."""
    _require_floating(a, op)
    ctx.dims, ctx.keepdim = dims, keepdim
    ctx.divisor = max(reduced_count(a.shape, dims) - correction, 0)


class Var(Op):
    """Variance over `dims`, dividing by (count - correction)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        _prepare_spread(ctx, a, dims, correction, keepdim, "var")
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(a)
        return _variance(a, dims, correction, keepdim, ctx.divisor, "var")

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        centered = a - a.mean(ctx.dims, keepdim=True)
        scale = 2.0 / ctx.divisor if ctx.divisor else float("inf")
        return unreduced(grad, a.shape, ctx.dims, ctx.keepdim) * centered * scale, None, None, None


class Std(Op):
    """Standard deviation over `dims`; its gradient is zero where it is zero (as in PyTorch)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        _prepare_spread(ctx, a, dims, correction, keepdim, "std")
        out = a._device.xp.sqrt(_variance(a, dims, correction, keepdim, ctx.divisor, "std"))
        return saved_with_input(ctx, a, out)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        centered = a - a.mean(ctx.dims, keepdim=True)
        scale = unreduced(grad, a.shape, ctx.dims, ctx.keepdim) / unreduced(
            nonzero_divisor(out), a.shape, ctx.dims, ctx.keepdim)
        inverse = 1.0 / ctx.divisor if ctx.divisor else float("inf")
        return scale * centered * inverse, None, None, None


def nonzero_divisor(value: Tensor) -> Tensor:
    """`value` with its zeros replaced by infinity: dividing by it gives 0 there, which is
    PyTorch's gradient convention at the kink of sqrt-like reductions (std, 2-norm)."""
    zeros = value._data == 0
    if not zeros.any():
        return value
    scalar = value._data.dtype.type
    return value + wrap_array(value._device.xp.where(zeros, scalar(np.inf), scalar(0)), value._device)


def _variance(a: Tensor, dims, correction, keepdim: bool, divisor, op: str):
    xp = a._device.xp
    if divisor > 0:
        return xp.var(a._data, axis=dims, ddof=correction, keepdims=keepdim)
    warnings.warn(f"{op}(): degrees of freedom is <= 0 (the correction {correction} is not less "
                  f"than the {reduced_count(a.shape, dims)} elements reduced); the result is "
                  "nan or inf", RuntimeWarning, stacklevel=4)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return xp.var(a._data, axis=dims, ddof=correction, keepdims=keepdim)


def _require_floating(a: Tensor, op: str) -> None:
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: input dtype must be floating point, got {a.dtype!r}; "
                           f"use t.float().{op}()")


def _dim_arguments(dim, keepdim, axis, keepdims):
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, bool(keepdim)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
        keepdims=None) -> Tensor:
    """Sum of elements over `dim` (an int, a tuple, or None for all).

    `axis`/`keepdims` are accepted as aliases of `dim`/`keepdim`.

    >>> import genesis
    >>> genesis.tensor([[1., 2.], [3., 4.]]).sum(dim=0)
    tensor([4., 6.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    dims = None if dim is None else normalize_dims(dim, input.ndim, "sum")
    return Sum.apply(input, dims, keepdim, _accumulator_dtype(input, dtype))


def mean(input: Tensor, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Mean of elements over `dim` (an int, a tuple, or None for all)."""
    dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    return Mean.apply(input, normalize_dims(dim, input.ndim, "mean"), keepdim)


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one `dim`; integers and bools multiply in int64.

    >>> import genesis
    >>> x = genesis.tensor([[1., 2.], [0., 4.]], requires_grad=True)
    >>> x.prod(dim=1)
    tensor([2., 0.], grad_fn=<ProdBackward>)
    >>> x.prod().backward(); x.grad  # exact with zeros: the product of the others
    tensor([[0., 0.],
            [8., 0.]])
    """
    if dim is not None:
        dim = normalize_dim(dim, input.ndim, "prod")
    return Prod.apply(input, dim, bool(keepdim), _accumulator_dtype(input, dtype))


def _accumulator_dtype(input: Tensor, dtype):
    if dtype is not None:
        return get_dtype(dtype).numpy_dtype
    if input._data.dtype.kind in "biu":
        return "int64"  # PyTorch sums and multiplies integers and bools in int64
    return None


def _variance_arguments(op: str, input: Tensor, dim, unbiased, keepdim, correction, axis, keepdims):
    """Resolve PyTorch's two signatures, `(dim, unbiased, keepdim)` and `(dim, *, correction,
    keepdim)`; `input.var(False)` passes `unbiased` first."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}: pass either unbiased or correction, not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return normalize_dims(dim, input.ndim, op), correction, keepdim


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Variance over `dim` (all dims when None), dividing by N - `correction`.

    `correction` defaults to 1 (Bessel's correction); `unbiased=False` means 0.

    >>> import genesis
    >>> genesis.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    >>> genesis.tensor([1., 2., 3., 4.]).var(correction=0)
    tensor(1.2500)
    """
    dims, correction, keepdim = _variance_arguments("var", input, dim, unbiased, keepdim,
                                                    correction, axis, keepdims)
    return Var.apply(input, dims, correction, keepdim)


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Standard deviation over `dim`; same arguments as `var`. Its gradient is 0 where the
    standard deviation is 0 (PyTorch's convention at that kink).

    >>> import genesis
    >>> genesis.tensor([[1., 3.], [2., 2.]]).std(dim=1)
    tensor([1.4142, 0.0000])
    """
    dims, correction, keepdim = _variance_arguments("std", input, dim, unbiased, keepdim,
                                                    correction, axis, keepdims)
    return Std.apply(input, dims, correction, keepdim)


METHODS = {"sum": sum, "mean": mean, "prod": prod, "var": var, "std": std}


def _reduction_samples(rng):
    def make(**kwargs):
        return [Sample((samples.values(rng, (3, 4, 2)),), kwargs, note=str(kwargs))]

    return (samples.unary(samples.values, rng) + make(dim=1) + make(dim=-1, keepdim=True)
            + make(dim=(0, 2)) + make(dim=(0, 2), keepdim=True)
            + [Sample((samples.values(rng, (4, 3)),), {"dim": 0}, layout="transposed",
                      note="transposed, dim 0")])


def _prod_samples(rng):
    def make(array, *args, layout="contiguous", **kwargs):
        return Sample((array,) + args, kwargs, layout=layout, note=f"{array.shape} {args} {kwargs}")

    one_zero = samples.values(rng, (3, 4)) * [1, 0, 1, 1]
    two_zeros = samples.values(rng, (2, 5)) * [0, 1, 1, 0, 1]
    return samples.unary(samples.values, rng) + [
        make(samples.values(rng, (3, 4, 2)), 1), make(samples.values(rng, (3, 4)), -1, True),
        make(samples.values(rng, (4, 3)), 0, layout="transposed"), make(one_zero),
        make(one_zero, 1), make(one_zero, 0, keepdim=True), make(two_zeros), make(two_zeros, 1)]


def _variance_samples(rng):
    def make(*args, shape=(3, 4), layout="contiguous", **kwargs):
        return Sample((samples.values(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return [make(), make(1), make(0, keepdim=True), make((0, 1), correction=0),
            make(-1, False, True), make(False), make(dim=1, correction=2, shape=(2, 5)),
            make(0, layout="transposed", shape=(4, 3)), make(1, layout="strided", shape=(2, 5)),
            make(1, shape=(2, 3, 4))]


def _torch_variance(name):
    return lambda torch, a, *args, **kwargs: getattr(torch, name)(a, *args, **kwargs)


OPS = [
    OpInfo("prod", prod, _prod_samples,
           torch=lambda torch, a, *args, **kw: torch.prod(a, *args, **kw)),
    OpInfo("var", var, _variance_samples, torch=_torch_variance("var")),
    OpInfo("std", std, _variance_samples, torch=_torch_variance("std")),
    OpInfo("sum", sum, _reduction_samples,
           torch=lambda torch, a, **kw: torch.sum(a, **kw) if kw else torch.sum(a)),
    OpInfo("mean", mean, lambda rng: [s for s in _reduction_samples(rng) if s.note != "zero-size"],
           torch=lambda torch, a, **kw: torch.mean(a, **kw) if kw else torch.mean(a)),
]
