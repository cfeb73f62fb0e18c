"""Reductions: each gradient spreads back over the reduced dimensions."""
from __future__ import annotations

from ..autograd.function import Function
from ..dtypes import get_dtype
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dims
from .broadcast import Expand
from .registry import OpInfo, Sample

__all__ = ["sum", "mean"]


def kept_shape(shape: tuple, dims) -> tuple:
    """`shape` with the reduced `dims` (None: all) set to 1, i.e. the keepdim result shape."""
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if index in dims else extent for index, extent in enumerate(shape))


def spread(grad: Tensor, shape: tuple, dims, keepdim: bool) -> Tensor:
    """Broadcast the gradient of a reduction back to the input's shape."""
    if not keepdim and dims is not None:
        grad = grad.reshape(kept_shape(shape, dims))
    return Expand.apply(grad, shape)


class Sum(Function):
    """Sum over `dims` (None: all elements)."""

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return a._data.sum(axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return spread(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Function):
    """Mean over `dims` (None: all elements)."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        if a._data.dtype.kind not in "f":
            raise RuntimeError(f"mean: input dtype must be floating point, got {a.dtype!r}; "
                               "use t.float().mean()")
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return a._data.mean(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        shape, dims = ctx.shape, ctx.dims
        count = 1
        for index, extent in enumerate(shape):
            if dims is None or index in dims:
                count *= extent
        return spread(grad, shape, dims, ctx.keepdim) / count, None, None


def _dim_arguments(dim, keepdim, axis, keepdims):
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, bool(keepdim)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Sum of elements over `dim` (an int, a tuple, or None for all).

    `axis`/`keepdims` are accepted as aliases of `dim`/`keepdim`.

    >>> import genesis
    >>> genesis.tensor([[1., 2.], [3., 4.]]).sum(dim=0)
    tensor([4., 6.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    dims = None if dim is None else normalize_dims(dim, input.ndim, "sum")
    if dtype is not None:
        numpy_dtype = get_dtype(dtype).numpy_dtype
    elif input._data.dtype.kind in "biu":
        numpy_dtype = "int64"  # PyTorch sums integers and bools in int64
    else:
        numpy_dtype = None
    return Sum.apply(input, dims, keepdim, numpy_dtype)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Mean of elements over `dim` (an int, a tuple, or None for all)."""
    dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    return Mean.apply(input, normalize_dims(dim, input.ndim, "mean"), keepdim)


METHODS = {"sum": sum, "mean": mean}


def _reduction_samples(rng):
    def make(**kwargs):
        return [Sample((samples.values(rng, (3, 4, 2)),), kwargs, note=str(kwargs))]

    return (samples.unary(samples.values, rng) + make(dim=1) + make(dim=-1, keepdim=True)
            + make(dim=(0, 2)) + make(dim=(0, 2), keepdim=True)
            + [Sample((samples.values(rng, (4, 3)),), {"dim": 0}, layout="transposed",
                      note="transposed, dim 0")])


OPS = [
    OpInfo("sum", sum, _reduction_samples,
           torch=lambda torch, a, **kw: torch.sum(a, **kw) if kw else torch.sum(a)),
    OpInfo("mean", mean, lambda rng: [s for s in _reduction_samples(rng) if s.note != "zero-size"],
           torch=lambda torch, a, **kw: torch.mean(a, **kw) if kw else torch.mean(a)),
]
