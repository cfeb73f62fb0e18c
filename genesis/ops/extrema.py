"""Extrema: max/min (over everything, or along a dim with indices), amax/amin, argmax/argmin.

Gradients at ties follow PyTorch: a full `max()`/`min()` and `amax`/`amin`
split the gradient evenly among the tied elements; `max(dim)`/`min(dim)` send
it to the index they returned (the first occurrence). NaN wins, as in PyTorch.
"""
from __future__ import annotations

from collections import namedtuple

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim, normalize_dims
from .gather import along_dim_key
from .index import IndexScatter
from .reduce import unreduced
from .registry import OpInfo, Sample
from .pairwise_extrema import maximum, minimum

__all__ = ["max", "min", "amax", "amin", "argmax", "argmin"]

max_result = namedtuple("max", ("values", "indices"))
min_result = namedtuple("min", ("values", "indices"))


def _reduce_saving_ties(ctx, a, dims, keepdim: bool, reduce):
    """`reduce` over `dims`; when a gradient is needed, also the tie weights (fixed now, so
    later in-place changes to `a` don't matter)."""
    xp = a._device.xp
    out = reduce(a._data, axis=dims, keepdims=keepdim)
    if ctx.needs_input_grad[0]:
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        ctx.weights = tie_weights(xp, a._data, unreduced_array(out, a.shape, dims, keepdim), dims)
    return out


def _split_among_ties(ctx, grad):
    """The gradient split evenly among the elements equal to the result."""
    weights = wrap_array(ctx.weights, grad._device)
    return unreduced(grad, ctx.shape, ctx.dims, ctx.keepdim) * weights, None, None


class Amax(Op):
    """Largest element over `dims` (None: all)."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return _reduce_saving_ties(ctx, a, dims, keepdim, a._device.xp.amax)

    backward = staticmethod(_split_among_ties)


class Amin(Op):
    """Smallest element over `dims` (None: all)."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return _reduce_saving_ties(ctx, a, dims, keepdim, a._device.xp.amin)

    backward = staticmethod(_split_among_ties)


class Max(Amax):
    """The largest element of the whole tensor (`x.max()`)."""


class Min(Amin):
    """The smallest element of the whole tensor (`x.min()`)."""


def tie_weights(xp, array, extreme, dims):
    """1/count at the elements equal to `extreme` (NaN matching NaN), 0 elsewhere."""
    chosen = array == extreme
    if array.dtype in FLOATING_NUMPY_DTYPES:
        nan = xp.isnan(extreme)
        if nan.any():
            chosen |= xp.isnan(array) & nan
    return chosen / chosen.sum(axis=dims, keepdims=True, dtype=array.dtype)


def unreduced_array(array, shape: tuple, dims, keepdim: bool):
    if keepdim or array.ndim == len(shape):
        return array
    return array.reshape(tuple(1 if dims is None or index in dims else extent
                               for index, extent in enumerate(shape)))


class ExtremumAlongDim(Op):
    """(values, indices) of the max or min along one dim; the gradient goes to the indices."""

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest):
        xp = a._device.xp
        array = a._data if a._data.ndim else a._data.reshape(1)
        pick = xp.argmax if largest else xp.argmin
        indices = pick(array, axis=dim, keepdims=True)
        values = xp.take_along_axis(array, indices, axis=dim)
        if ctx.needs_input_grad[0]:
            ctx.shape, ctx.dim, ctx.indices = a.shape, dim, indices
        if not keepdim or not a._data.ndim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        if not a._data.ndim:
            values, indices = values.reshape(()), indices.reshape(())
        return values, indices.astype("int64", copy=False)

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx.indices
        key = along_dim_key(grad._device.xp, indices, ctx.dim)
        spread = IndexScatter.apply(grad.reshape(indices.shape), ctx.shape or (1,), key)
        return spread.reshape(ctx.shape), None, None, None


class MaxAlongDim(ExtremumAlongDim):
    """(values, indices) of the largest elements along one dim."""


class MinAlongDim(ExtremumAlongDim):
    """(values, indices) of the smallest elements along one dim."""


class Argmax(Op):
    """Index of the largest element (flattened when `dim` is None)."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        return _arg_extremum(a, dim, keepdim, a._device.xp.argmax)


class Argmin(Op):
    """Index of the smallest element (flattened when `dim` is None)."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        return _arg_extremum(a, dim, keepdim, a._device.xp.argmin)


def _arg_extremum(a: Tensor, dim, keepdim: bool, pick):
    array = a._data
    if dim is None or array.ndim == 0:
        index = pick(array.reshape(-1))
        shape = (1,) * array.ndim if keepdim else ()
        return index.reshape(shape).astype("int64", copy=False)
    return pick(array, axis=dim, keepdims=keepdim).astype("int64", copy=False)


def _along_dim(op: str, input: Tensor, dim, keepdim: bool, largest: bool):
    dim = normalize_dim(dim, input.ndim, op)
    _require_elements(op, input, dim)
    if largest:
        return max_result(*MaxAlongDim.apply(input, dim, bool(keepdim), True))
    return min_result(*MinAlongDim.apply(input, dim, bool(keepdim), False))


def _require_elements(op: str, input: Tensor, dim) -> None:
    if dim is None and input._data.size == 0:
        raise RuntimeError(f"{op}: can't reduce a tensor with no elements (shape "
                           f"{tuple(input.shape)}) over all dims; pass a dim to reduce over")
    if dim is not None and input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{op}: dim {dim} of the tensor of shape {tuple(input.shape)} has size 0, "
                         "so it has no extremum")


def _binary(op: str, input: Tensor, other: Tensor) -> Tensor:
    """`max(a, b)` / `min(a, b)` with a tensor `b`: the elementwise maximum / minimum."""
    return maximum(input, other) if op == "max" else minimum(input, other)


def max(input: Tensor, dim=None, keepdim: bool = False):
    """The largest element (a 0-d tensor), or along `dim` the named tuple (values, indices).

    `max(a, b)` with a tensor `b` is the elementwise `maximum`. Ties: a full
    max splits the gradient evenly; along a dim it goes to the returned index.

    >>> import genesis
    >>> x = genesis.tensor([[1., 5.], [7., 2.]])
    >>> x.max()
    tensor(7.)
    >>> values, indices = x.max(dim=1)
    >>> values, indices
    (tensor([5., 7.]), tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return _binary("max", input, dim)
    if dim is None:
        _require_elements("max", input, None)
        return Max.apply(input, None, False)
    return _along_dim("max", input, dim, keepdim, largest=True)


def min(input: Tensor, dim=None, keepdim: bool = False):
    """The smallest element, or along `dim` the named tuple (values, indices); see `max`.

    >>> import genesis
    >>> genesis.tensor([[1., 5.], [7., 2.]]).min(dim=0).indices
    tensor([0, 1])
    """
    if isinstance(dim, Tensor):
        return _binary("min", input, dim)
    if dim is None:
        _require_elements("min", input, None)
        return Min.apply(input, None, False)
    return _along_dim("min", input, dim, keepdim, largest=False)


def _reduction_dims(op: str, input: Tensor, dim):
    dims = None if dim is None or dim == () else normalize_dims(dim, input.ndim, op)
    if dims is None:
        _require_elements(op, input, None)
    else:
        for d in dims:
            _require_elements(op, input, d)
    return dims


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Largest elements over `dim` (an int or tuple; all dims by default). Ties share the
    gradient evenly.

    >>> import genesis
    >>> x = genesis.tensor([1., 3., 3.], requires_grad=True)
    >>> x.amax().backward(); x.grad
    tensor([0.0000, 0.5000, 0.5000])
    """
    return Amax.apply(input, _reduction_dims("amax", input, dim), bool(keepdim))


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest elements over `dim` (an int or tuple; all dims by default); see `amax`."""
    return Amin.apply(input, _reduction_dims("amin", input, dim), bool(keepdim))


def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the largest element: over the flattened tensor, or along `dim`.

    >>> import genesis
    >>> genesis.tensor([[1., 5.], [7., 2.]]).argmax()
    tensor(2)
    """
    if dim is not None:
        dim = normalize_dim(dim, input.ndim, "argmax")
    _require_elements("argmax", input, dim)
    return Argmax.apply(input, dim, bool(keepdim))


def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element: over the flattened tensor, or along `dim`."""
    if dim is not None:
        dim = normalize_dim(dim, input.ndim, "argmin")
    _require_elements("argmin", input, dim)
    return Argmin.apply(input, dim, bool(keepdim))


METHODS = {"max": max, "min": min, "amax": amax, "amin": amin, "argmax": argmax,
           "argmin": argmin}


def _full_samples(rng):
    return [s for s in samples.unary(samples.values, rng) if s.note != "zero-size"]


def _dim_samples(rng):
    def sample(*args, layout="contiguous", shape=(3, 4, 2), **kwargs):
        return Sample((samples.values(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return [sample(1), sample(-1, keepdim=True), sample(0, layout="transposed"),
            sample(1, layout="strided", shape=(2, 3)), sample(0, shape=()),
            sample(1, shape=(0, 3)), sample(0, True, shape=(4,))]


def _amax_samples(rng):
    def sample(*args, layout="contiguous", shape=(3, 4, 2), **kwargs):
        return Sample((samples.values(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return _full_samples(rng) + [
        sample(1), sample((0, 2)), sample((-1, 0), keepdim=True), sample(0, layout="transposed"),
        sample(1, shape=(0, 3))]


def _arg_samples(rng):
    return _full_samples(rng) + [Sample(s.args, s.kwargs, layout=s.layout, note=s.note)
                                 for s in _dim_samples(rng)] + [
        Sample((samples.values(rng, (3, 4)), None, True), note="flattened, keepdim")]


OPS = [
    OpInfo("max", max, _full_samples, torch=lambda torch, a: torch.max(a), kinks="ties"),
    OpInfo("max_dim", max, _dim_samples, kinks="ties",
           torch=lambda torch, a, *args, **kw: torch.max(a, *args, **kw)),
    OpInfo("min", min, _full_samples, torch=lambda torch, a: torch.min(a), kinks="ties"),
    OpInfo("min_dim", min, _dim_samples, kinks="ties",
           torch=lambda torch, a, *args, **kw: torch.min(a, *args, **kw)),
    OpInfo("amax", amax, _amax_samples, kinks="ties",
           torch=lambda torch, a, *args, **kw: torch.amax(a, *args, **kw)),
    OpInfo("amin", amin, _amax_samples, kinks="ties",
           torch=lambda torch, a, *args, **kw: torch.amin(a, *args, **kw)),
    OpInfo("argmax", argmax, _arg_samples, differentiable=False,
           torch=lambda torch, a, *args, **kw: torch.argmax(a, *args, **kw)),
    OpInfo("argmin", argmin, _arg_samples, differentiable=False,
           torch=lambda torch, a, *args, **kw: torch.argmin(a, *args, **kw)),
]
