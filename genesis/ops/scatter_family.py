"""Writing into a copy of a tensor at indexed places: `scatter_reduce`, `index_reduce`,
`index_copy`, `index_put`, `masked_scatter`, `put`, `select_scatter`, `slice_scatter`,
`diagonal_scatter` (each with its in-place form where PyTorch has one) and `fill_diagonal_`.

Most are an index key plus the Functions of `index.py` and `gather.py` (IndexPut writes,
ScatterAdd accumulates), so their gradients are those Functions'. The reductions amax, amin
and prod have their own Functions (prod's in `scatter_product.py`): amax/amin share the
gradient evenly among the values tied for the extreme (the input's own value included when
it counts), as PyTorch does; prod's gradient is the product of the other factors, exact
when factors are zero.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import FLOATING_NUMPY_DTYPES
from ..autocast_rules import PROMOTE_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim
from ._scatter import add_at
from .gather import (ScatterAdd, _along_dim_arguments, _check_source, _slices_arguments,
                     _trimmed, along_dim_key, check_range, index_array)
from .index import GetItem, IndexPut, array_key
from .inplace import apply_inplace, refuse_leaf_change
from .masked import MaskedFill, _broadcast_shape, _mask_array
from .registry import OpInfo, Sample
from .scatter_product import ScatterProduct, applied_at

__all__ = ["scatter_reduce", "index_reduce", "index_copy", "index_put", "masked_scatter", "put",
           "select_scatter", "slice_scatter", "diagonal_scatter"]

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class IndexCopy(IndexPut):
    """`a` with whole slices along a dim replaced by `source`."""


class MaskedScatter(IndexPut):
    """`a` with the places where a mask is True taken, in order, from `source`."""


class SliceScatter(IndexPut):
    """`a` with a slice (select, slice or diagonal) replaced by `src`."""


class ScatterExtreme(Op):
    """`a` with the largest (or smallest) of itself and the `src` values scattered to each
    place; the gradient is shared evenly among the tied candidates."""

    @staticmethod
    def forward(ctx, a, src, key, largest, include_self):
        xp = a._device.xp
        data, values = a._data, src._data.astype(a._data.dtype, copy=False)
        touched = xp.zeros(data.shape, bool)
        touched[key] = True
        out = data.copy()
        if not include_self:
            out[touched] = _lowest(data.dtype) if largest else _highest(data.dtype)
        out = applied_at(a._device, np.maximum if largest else np.minimum, out, key, values)
        # PyTorch counts the input's tie even when include_self=False leaves it out
        own = data == out
        picked = values == out[key]
        count = own.astype(data.dtype)
        add_at(xp, count, key, picked.astype(data.dtype))
        kept = own & ~touched if not include_self else own
        ctx.key, ctx.own_share, ctx.src_share = key, kept / count, picked / count[key]
        return out

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        grad_a = grad * wrap_array(ctx.own_share.astype(grad._data.dtype), grad._device) \
            if needs[0] else None
        grad_src = GetItem.apply(grad, ctx.key) * wrap_array(
            ctx.src_share.astype(grad._data.dtype), grad._device) if needs[1] else None
        return grad_a, grad_src, None, None, None


def _lowest(dtype):
    return -np.inf if dtype in FLOATING_NUMPY_DTYPES else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype in FLOATING_NUMPY_DTYPES else np.iinfo(dtype).max


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of `input` with the `src` values reduced into place `index` along `dim`
    ("sum", "prod", "mean", "amax", "amin"); with include_self=False the input's own value at
    a place that receives values is left out of the reduction.

    >>> import genesis
    >>> x = genesis.tensor([1., 2., 3.])
    >>> x.scatter_reduce(0, genesis.tensor([0, 0, 2]), genesis.tensor([5., 7., 1.]), "amax")
    tensor([7., 2., 3.])
    >>> x.scatter_reduce(0, genesis.tensor([0, 0, 2]), genesis.tensor([5., 7., 1.]), "mean",
    ...                  include_self=False)
    tensor([6., 2., 1.])
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce: src must be a Tensor, got {type(src).__name__}")
    _, array, key = _along_dim_arguments("scatter_reduce", input, dim, index, src)
    return _reduced(input, _trimmed(src, array), key, reduce, include_self, "scatter_reduce")


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place `scatter_reduce`."""
    return _write_back("scatter_reduce_", self, lambda copy: scatter_reduce(
        copy, dim, index, src, reduce, include_self=include_self))


def _write_back(op: str, self: Tensor, compute) -> Tensor:
    """Store `compute(clone of self)` into `self` in place, recording the write for autograd
    (the clone keeps the write from invalidating what the result's graph saved)."""
    if grad_state.enabled:
        refuse_leaf_change(op, self)
    return apply_inplace(IndexPut, self, compute(self.clone()), (Ellipsis,))


def _reduced(input: Tensor, src: Tensor, key: tuple, reduce: str, include_self: bool,
             op: str) -> Tensor:
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"{op}: reduce must be one of {', '.join(_REDUCTIONS)}, got {reduce!r}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{op}: src ({src.dtype.name}) and input ({input.dtype.name}) must "
                           "have the same dtype; convert src with .to(input.dtype)")
    if reduce in ("amax", "amin"):
        return ScatterExtreme.apply(input, src, key, reduce == "amax", include_self)
    xp = input._device.xp
    touched = xp.zeros(input.shape, bool)
    touched[key] = True
    if reduce == "prod":
        base = input if include_self else MaskedFill.apply(input, 1, touched)
        return base * ScatterProduct.apply(src, key, input.shape)
    base = input if include_self else MaskedFill.apply(input, 0, touched)
    total = ScatterAdd.apply(base, src, key)
    if reduce == "sum":
        return total
    count = xp.zeros(input.shape, input._data.dtype)
    add_at(xp, count, key, xp.ones(src.shape, count.dtype))
    count = wrap_array(xp.maximum(count + 1 if include_self else count, 1), input._device)
    return total / count if input.is_floating_point() else total // count


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of `input` with slice i of `source` along `dim` reduced into slice `index[i]`
    ("prod", "mean", "amax", "amin"), as `scatter_reduce` with whole slices.

    >>> import genesis
    >>> genesis.ones(2, 2).index_reduce(0, genesis.tensor([1, 1]),
    ...                                 genesis.tensor([[2., 3.], [4., 5.]]), "prod")
    tensor([[ 1.,  1.],
            [ 8., 15.]])
    """
    return _index_reduce("index_reduce", input, dim, index, source, reduce, include_self)


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In-place `index_reduce`."""
    return _write_back("index_reduce_", self, lambda copy: _index_reduce(
        "index_reduce_", copy, dim, index, source, reduce, include_self))


def _index_reduce(op, input, dim, index, source, reduce, include_self) -> Tensor:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"{op}: reduce must be one of prod, mean, amax, amin, got {reduce!r}")
    dim, array, _ = _slices_arguments(op, input, dim, index)
    _check_source(op, input, dim, array, source)
    shape = [1] * input.ndim
    shape[dim] = array.shape[0]
    along = input._device.xp.broadcast_to(array.reshape(shape), source.shape)
    key = along_dim_key(input._device.xp, along, dim)
    return _reduced(input, source, key, reduce, include_self, op)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` with slice `index[i]` along `dim` replaced by slice i of `source`.

    >>> import genesis
    >>> source = genesis.tensor([[1., 2.], [3., 4.]])
    >>> genesis.zeros(3, 2).index_copy(0, genesis.tensor([2, 0]), source)
    tensor([[3., 4.],
            [0., 0.],
            [1., 2.]])
    """
    return IndexCopy.apply(input, source, _copy_key("index_copy", input, dim, index, source))


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place `index_copy`."""
    return apply_inplace(IndexCopy, self, source,
                         _copy_key("index_copy_", self, dim, index, source))


def _copy_key(op: str, input: Tensor, dim: int, index, source) -> tuple:
    dim, array, key = _slices_arguments(op, input, dim, index)
    if isinstance(source, Tensor) and source.ndim == input.ndim and \
            source.shape[dim] != array.shape[0]:
        raise IndexError(f"{op}: the number of indices ({array.shape[0]}) must equal "
                         f"source.size({dim}) ({source.shape[dim]})")
    _check_source(op, input, dim, array, source)
    return key


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `input[indices] = values` (or `+=` with accumulate, repeated
    places adding up); `indices` is a tuple of index tensors, one per leading dim.

    >>> import genesis
    >>> index = (genesis.tensor([0, 0, 2]),)
    >>> genesis.zeros(3).index_put(index, genesis.tensor(1.), accumulate=True)
    tensor([2., 0., 1.])
    """
    input, values = autocast_inputs(PROMOTE_ON_CUDA, input, values)
    key, values = _put_arguments("index_put", input, indices, values)
    return (ScatterAdd if accumulate else IndexPut).apply(input, values, key)


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place `index_put`."""
    key, values = _put_arguments("index_put_", self, indices, values)
    return apply_inplace(ScatterAdd if accumulate else IndexPut, self, values, key)


def _put_arguments(op: str, input: Tensor, indices, values) -> tuple:
    """(key, values expanded to the indexed region's shape)."""
    if not isinstance(indices, tuple | list):
        raise TypeError(f"{op}: indices must be a tuple of tensors, got {type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}: values must be a Tensor, got {type(values).__name__}")
    if len(indices) > input.ndim:
        raise IndexError(f"{op}: too many indices ({len(indices)}) for a tensor of dimension "
                         f"{input.ndim}")
    if not all(isinstance(item, Tensor) for item in indices):
        raise TypeError(f"{op}: indices must be a tuple of index tensors, got "
                        f"{[type(item).__name__ for item in indices]}")
    key = array_key(tuple(indices), input._device)
    region = GetItem.apply(input.detach(), key).shape
    if values.dtype != input.dtype:
        raise RuntimeError(f"{op}: values ({values.dtype.name}) and input ({input.dtype.name}) "
                           "must have the same dtype; convert values with .to(input.dtype)")
    try:
        np.broadcast_shapes(values.shape, region)
    except ValueError:
        raise RuntimeError(f"{op}: values of shape {tuple(values.shape)} can't be broadcast to "
                           f"the indexed shape {tuple(region)}") from None
    return key, values if values.shape == region else values.expand(region)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` with the places where `mask` is True (it broadcasts) filled, in
    row-major order, with the first elements of `source`.

    >>> import genesis
    >>> x = genesis.zeros(2, 2)
    >>> mask = genesis.tensor([[True, False], [True, True]])
    >>> x.masked_scatter(mask, genesis.tensor([1., 2., 3., 4.]))
    tensor([[1., 0.],
            [2., 3.]])
    """
    mask_array = _mask_array("masked_scatter", input, mask)
    shape = _broadcast_shape("masked_scatter", input, mask_array)
    if input.shape != shape:
        input = input.expand(shape)
    mask_array = input._device.xp.broadcast_to(mask_array, shape)
    return MaskedScatter.apply(input, *_masked_source("masked_scatter", input, mask_array, source))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place `masked_scatter`; the mask must broadcast to self's shape."""
    mask_array = _mask_array("masked_scatter_", self, mask)
    if _broadcast_shape("masked_scatter_", self, mask_array) != self.shape:
        raise RuntimeError(f"masked_scatter_: the mask of shape {tuple(mask.shape)} would grow "
                           f"the tensor of shape {tuple(self.shape)}; use masked_scatter")
    mask_array = self._device.xp.broadcast_to(mask_array, self.shape)
    return apply_inplace(MaskedScatter, self,
                         *_masked_source("masked_scatter_", self, mask_array, source))


def _masked_source(op: str, input: Tensor, mask, source) -> tuple:
    """(the first elements of source, one per True, key)."""
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    count = int(mask.sum())
    if count > source.numel():
        raise RuntimeError(f"{op}: the mask has {count} True elements but source has only "
                           f"{source.numel()}; source needs at least as many elements")
    return source.reshape(-1)[:count], (mask,)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with the elements at flat positions `index` (of the row-major
    flattened input; negative count from the end) replaced by `source` (added with
    accumulate).

    >>> import genesis
    >>> genesis.zeros(2, 2).put(genesis.tensor([3, -4]), genesis.tensor([5., 6.]))
    tensor([[6., 0.],
            [0., 5.]])
    """
    flat, key, values = _flat_put_arguments("put", input, index, source)
    return (ScatterAdd if accumulate else IndexPut).apply(flat, values, key).reshape(input.shape)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place `put`."""
    flat, key, values = _flat_put_arguments("put_", self, index, source)
    xp = self._device.xp
    positions = xp.unravel_index(key[0], self.shape) if self.ndim else (Ellipsis,)
    return apply_inplace(ScatterAdd if accumulate else IndexPut, self, values.reshape(-1),
                         tuple(positions))


def _flat_put_arguments(op: str, input: Tensor, index, source) -> tuple:
    array = index_array(op, input, index).reshape(-1)
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if source.numel() != array.size:
        raise IndexError(f"{op}: source has {source.numel()} elements and index {array.size}; "
                           "they must have the same number of elements")
    size = input.numel()
    if check_range(op, array, 0, size, input._device, negative=True) < 0:
        array = array % size
    return input.reshape(-1), (array,), source.reshape(-1)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with `input.select(dim, index)` replaced by `src`.

    >>> import genesis
    >>> genesis.zeros(2, 2).select_scatter(genesis.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    dim = normalize_dim(dim, input.ndim, "select_scatter")
    extent = input.shape[dim]
    if not -extent <= index < extent:
        raise IndexError(f"select_scatter: index {index} is out of range for dim {dim} of size "
                         f"{extent}")
    return _slice_put("select_scatter", input, src, (slice(None),) * dim + (index, Ellipsis))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of `input` with `input[start:end:step]` along `dim` replaced by `src`.

    >>> import genesis
    >>> genesis.zeros(4).slice_scatter(genesis.ones(2), start=1, step=2)
    tensor([0., 1., 0., 1.])
    """
    if step <= 0:
        raise RuntimeError(f"slice_scatter: step must be positive, got {step}")
    dim = normalize_dim(dim, input.ndim, "slice_scatter")
    return _slice_put("slice_scatter", input, src,
                      (slice(None),) * dim + (slice(start, end, step), Ellipsis))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of `input` with `input.diagonal(offset, dim1, dim2)` replaced by `src`.

    >>> import genesis
    >>> genesis.zeros(2, 3).diagonal_scatter(genesis.tensor([1., 2.]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.]])
    """
    dim1 = normalize_dim(dim1, input.ndim, "diagonal_scatter")
    dim2 = normalize_dim(dim2, input.ndim, "diagonal_scatter")
    if dim1 == dim2:
        raise RuntimeError(f"diagonal_scatter: dim1 and dim2 must differ, both are {dim1}")
    xp = input._device.xp
    length = max(0, min(input.shape[dim1] + min(offset, 0), input.shape[dim2] - max(offset, 0)))
    rows = xp.arange(length) - min(offset, 0)
    key = [slice(None)] * input.ndim
    key[dim1], key[dim2] = rows, rows + offset
    if not isinstance(src, Tensor):
        raise TypeError(f"diagonal_scatter: src must be a Tensor, got {type(src).__name__}")
    kept = tuple(extent for axis, extent in enumerate(input.shape) if axis not in (dim1, dim2))
    expected = kept + (length,)
    if tuple(src.shape) != expected:
        raise RuntimeError(f"diagonal_scatter: src must have the diagonal's shape {expected}, "
                           f"got {tuple(src.shape)}")
    # NumPy puts the diagonal dim of separated index arrays first, of adjacent ones in place
    where_diagonal = min(dim1, dim2) if abs(dim1 - dim2) == 1 else 0
    return SliceScatter.apply(input, src.movedim(-1, where_diagonal), tuple(key))


def _slice_put(op: str, input: Tensor, src, key: tuple) -> Tensor:
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    region = GetItem.apply(input.detach(), key).shape
    if tuple(src.shape) != tuple(region):
        raise RuntimeError(f"{op}: src must have the shape of the slice it replaces, "
                           f"{tuple(region)}, got {tuple(src.shape)}")
    return SliceScatter.apply(input, src, key)


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all indices equal) with `fill_value`, in place; a tall 2-D
    matrix restarts the diagonal every ncols + 1 rows when `wrap` (as NumPy).

    >>> import genesis
    >>> genesis.zeros(2, 3).fill_diagonal_(5.)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    if self.ndim < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must be larger than 1, got {self.ndim}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length, got "
                           f"shape {tuple(self.shape)}")
    xp = self._device.xp
    if self.ndim == 2:
        rows, cols = self.shape
        positions = xp.arange(0, rows * cols if wrap else min(rows, cols) * cols, cols + 1)
    else:
        step = 1 + int(np.cumprod(self.shape[:-1]).sum())
        positions = xp.arange(0, self.shape[0] * step, step)[:self.shape[0]]
    key = xp.unravel_index(positions, self.shape)
    return apply_inplace(IndexPut, self, fill_value, tuple(key))


METHODS = {
    "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
    "index_reduce": index_reduce, "index_reduce_": index_reduce_,
    "index_copy": index_copy, "index_copy_": index_copy_,
    "index_put": index_put, "index_put_": index_put_,
    "masked_scatter": masked_scatter, "masked_scatter_": masked_scatter_,
    "put": put, "put_": put_, "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "fill_diagonal_": fill_diagonal_,
}


def _ints(rng, high, shape):
    return rng.integers(0, high, size=shape).astype(np.int64)


def _scatter_reduce_samples(rng):
    values = samples.values
    found = []
    for reduce in _REDUCTIONS:
        index = np.array([[0, 2, 0, 2], [1, 1, 1, 0]])
        found += [
            Sample((values(rng, (3, 4)), 1, index, values(rng, (2, 4)), reduce),
                   note=f"{reduce}, smaller index"),
            Sample((values(rng, (3, 4)), 0, _ints(rng, 3, (5, 4)), values(rng, (5, 4)), reduce),
                   {"include_self": False}, note=f"{reduce}, without self"),
            Sample((values(rng, (4, 3)), 0, _ints(rng, 4, (4, 3)), values(rng, (4, 3)), reduce),
                   layout="transposed", note=f"{reduce}, transposed"),
            Sample((values(rng, (3, 4)), 1, _ints(rng, 4, (3, 4)), values(rng, (3, 4)), reduce),
                   grad=(False, False, True), note=f"{reduce}, input needs no grad"),
        ]
    return found


def _index_reduce_samples(rng):
    values = samples.values
    return [Sample((values(rng, (3, 4)), dim, index, values(rng, shape), reduce), kwargs,
                   layout=layout, note=f"{reduce} {kwargs} {layout}")
            for reduce in ("prod", "mean", "amax", "amin")
            for dim, index, shape, kwargs, layout in [
                (0, np.array([2, 0, 2]), (3, 4), {}, "contiguous"),
                (1, np.array([3, 3]), (3, 2), {"include_self": False}, "contiguous"),
                (1, np.array([1, 0, 1]), (3, 3), {}, "transposed")]]


def _index_copy_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 0, np.array([2, 0]), values(rng, (2, 4))), note="dim 0"),
        Sample((values(rng, (3, 4)), 1, np.array([3, 1]), values(rng, (3, 2))),
               grad=(False, False, True), note="input needs no grad"),
        Sample((values(rng, (4, 3)), 1, np.array([1]), values(rng, (4, 1))), layout="transposed",
               note="transposed"),
    ]


def _index_put_call(input: Tensor, values: Tensor, *indices, accumulate: bool = False) -> Tensor:
    """`index_put` with the index tensors last (so that samples can hold them as arrays)."""
    return index_put(input, indices, values, accumulate)


def _index_put_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), values(rng, (2,)), np.array([0, 2]), np.array([1, 3])),
               note="two index tensors"),
        Sample((values(rng, (3, 4)), values(rng, (4,)), np.array([0, 0, 2])),
               {"accumulate": True}, note="accumulate, broadcast values"),
        Sample((values(rng, (3, 4)), values(rng, (2, 4)), np.array([2, 1])),
               grad=(False, True, False), note="input needs no grad"),
        Sample((values(rng, (4, 3)), values(rng, (2,)), np.array([1, 1]), np.array([0, 0])),
               {"accumulate": True}, layout="transposed", note="accumulate repeats, transposed"),
    ]


def _masked_scatter_samples(rng):
    def sample(shape, mask_shape, grad=None, layout="contiguous"):
        mask = rng.uniform(size=mask_shape) < 0.5
        count = int(np.broadcast_to(mask, np.broadcast_shapes(shape, mask_shape)).sum())
        return Sample((samples.values(rng, shape), mask, samples.values(rng, (count + 2,))),
                      grad=grad, layout=layout, note=f"{shape} mask {mask_shape} {layout}")

    return [sample((3, 4), (3, 4)), sample((3, 4), (4,)), sample((3, 1), (2, 3, 4)),
            sample((3, 4), (3, 4), grad=(False, False, True)),
            sample((4, 3), (4, 3), layout="transposed")]


def _put_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), np.array([0, 10, -1, 5]), values(rng, (4,))),
               note="negative"),
        Sample((values(rng, (3, 4)), np.array([[1, 1], [2, 7]]), values(rng, (2, 2))),
               {"accumulate": True}, note="accumulate repeats"),
        Sample((values(rng, (4, 3)), np.array([2, 3]), values(rng, (2,))),
               grad=(False, False, True), layout="transposed",
               note="transposed, input needs no grad"),
    ]


def _select_scatter_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), values(rng, (4,)), 0, 1), note="row"),
        Sample((values(rng, (3, 4)), values(rng, (3,)), -1, -1), grad=(False, True),
               note="last column, input needs no grad"),
        Sample((values(rng, (4, 3)), values(rng, (3,)), 0, 2), layout="transposed",
               note="transposed"),
    ]


def _slice_scatter_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (5, 4)), values(rng, (2, 4)), 0, 1, 5, 2), note="step 2"),
        Sample((values(rng, (3, 5)), values(rng, (3, 3)), 1, None, 3), grad=(True, False),
               note="src needs no grad"),
        Sample((values(rng, (4, 3)), values(rng, (4, 2)), 1, 1), layout="transposed",
               note="transposed"),
    ]


def _diagonal_scatter_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), values(rng, (3,))), note="main"),
        Sample((values(rng, (3, 4)), values(rng, (2,)), -1), grad=(False, True), note="below"),
        Sample((values(rng, (2, 3, 4)), values(rng, (3, 2)), 1, 0, 2), note="separated dims"),
        Sample((values(rng, (2, 3, 4)), values(rng, (2, 3)), 0, 2, 1), layout="transposed",
               note="adjacent dims, transposed"),
    ]


def _filled_diagonal(input: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """`fill_diagonal_` on a copy (a leaf that requires grad can't be written in place)."""
    return fill_diagonal_(input.clone(), fill_value, wrap)


def _fill_diagonal_samples(rng):
    values = samples.values
    return [Sample((values(rng, (3, 4)), 2.0), note="wide"),
            Sample((values(rng, (7, 3)), -1.0, True), note="tall, wrap"),
            Sample((values(rng, (7, 3)), -1.0), layout="transposed", note="tall, transposed"),
            Sample((values(rng, (3, 3, 3)), 0.5), note="3-D")]


OPS = [
    OpInfo("scatter_reduce", scatter_reduce,
           _scatter_reduce_samples,
           torch=lambda torch, a, dim, index, src, reduce, **kw: torch.scatter_reduce(
               a, dim, index, src, reduce, **kw), kinks="ties"),
    OpInfo("index_reduce", index_reduce, _index_reduce_samples,
           torch=lambda torch, a, dim, index, src, reduce, **kw: a.index_reduce(
               dim, index, src, reduce, **kw)),
    OpInfo("index_copy", index_copy, _index_copy_samples,
           torch=lambda torch, a, dim, index, src: torch.index_copy(a, dim, index, src)),
    OpInfo("index_put", _index_put_call, _index_put_samples,
           torch=lambda torch, a, values, *indices, **kw: torch.index_put(
               a, indices, values, **kw)),
    OpInfo("masked_scatter", masked_scatter, _masked_scatter_samples,
           torch=lambda torch, a, mask, source: torch.masked_scatter(a, mask, source)),
    OpInfo("put", put, _put_samples,
           torch=lambda torch, a, index, source, **kw: a.put(index, source, **kw)),
    OpInfo("select_scatter", select_scatter, _select_scatter_samples,
           torch=lambda torch, *args: torch.select_scatter(*args)),
    OpInfo("slice_scatter", slice_scatter, _slice_scatter_samples,
           torch=lambda torch, *args: torch.slice_scatter(*args)),
    OpInfo("diagonal_scatter", diagonal_scatter, _diagonal_scatter_samples,
           torch=lambda torch, *args: torch.diagonal_scatter(*args)),
    OpInfo("fill_diagonal_", _filled_diagonal, _fill_diagonal_samples,
           torch=lambda torch, a, *args: a.clone().fill_diagonal_(*args)),
]
