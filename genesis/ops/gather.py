"""Index ops along one dim: gather, scatter, scatter_add, index_select, index_add, index_fill,
take_along_dim.

Each is indexing with a key built from the index tensor, so each reuses the
Functions of `index.py` (subclassed, so graphs show the op's own name): a
gather is `a[key]`, a scatter `a[key] = src`, a scatter_add an unbuffered
`a[key] += src`. Their gradients are the same key used the other way round.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..autocast_rules import PROMOTE_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..creation import full
from ..device import host_numbers
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dim
from ._scatter import add_at
from .index import GetItem, IndexPut
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .scatter_product import ScatterProduct

__all__ = ["gather", "scatter", "scatter_add", "index_select", "index_add", "index_fill",
           "take_along_dim"]


class Gather(GetItem):
    """`a` picked along a dim at an index tensor's positions (a copy)."""

    is_view = False


class IndexSelect(GetItem):
    """Whole slices of `a` along a dim, at a 1-D index (a copy)."""

    is_view = False


class Scatter(IndexPut):
    """`a` with `src` written along a dim at an index tensor's positions."""


class IndexFill(IndexPut):
    """`a` with whole slices along a dim set to a value."""


class ScatterAdd(Op):
    """`a` with `values` added at `key`; repeated positions accumulate."""

    @staticmethod
    def forward(ctx, a, values, key):
        ctx.key = key
        out = a._data.copy()
        add_at(a._device.xp, out, key, values._data.astype(out.dtype, copy=False))
        return out

    @staticmethod
    def forward_inplace(target, values, key):
        add_at(target._device.xp, target._data, key,
               values._data.astype(target._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        grad_values = GetItem.apply(grad, ctx.key) if ctx.needs_input_grad[1] else None
        return grad, grad_values, None


class IndexAdd(ScatterAdd):
    """`a` with `source` added to whole slices along a dim; repeated indices accumulate."""


def along_dim_key(xp, index, dim: int) -> tuple:
    """The key that picks, at each position of `index`, element `index[position]` along `dim`
    and the same position along the other dims.

    >>> import numpy as np
    >>> a = np.array([[10, 11], [12, 13]])
    >>> a[along_dim_key(np, np.array([[1], [0]]), 1)]
    array([[11],
           [12]])
    """
    key = []
    for axis, extent in enumerate(index.shape):
        if axis == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[axis] = extent
            key.append(xp.arange(extent).reshape(shape))
    return tuple(key)


def slices_key(dim: int, index) -> tuple:
    """The key that picks whole slices along `dim` at the 1-D `index`."""
    return (slice(None),) * dim + (index, Ellipsis)


def index_array(op: str, input: Tensor, index, name: str = "index"):
    """The integer array of an index Tensor, or a clear error."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}: {name} must be an integer Tensor, got {type(index).__name__}")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: {name} must be an integer tensor, got {index.dtype!r}; "
                           "convert it with .long()")
    if index._device != input._device:
        raise RuntimeError(f"{op}: {name} is on {index._device}, the input on {input._device}")
    return index._data


def check_range(op: str, index, dim: int, size: int, device, negative: bool = False) -> int:
    """The smallest index; IndexError unless every index is in [0, size) (or [-size, size)
    if `negative`). `index` is an array on `device`."""
    if index.size == 0:
        return 0
    low, high = host_numbers(device, index.min(), index.max())
    bad = low if low < (-size if negative else 0) else high if high >= size else None
    if bad is not None:
        allowed = f"[{-size if negative else 0}, {size - 1}]" if size else "none: the dim is empty"
        raise IndexError(f"{op}: index {bad} is out of bounds for dim {dim} with size {size} "
                         f"(allowed: {allowed})")
    return low


def _check_along_dim(op: str, input: Tensor, index, dim: int, src: Tensor | None = None) -> None:
    if index.ndim != input.ndim:
        raise RuntimeError(f"{op}: the index must have as many dims as the input, got index shape "
                           f"{tuple(index.shape)} for input shape {tuple(input.shape)}")
    for axis, extent in enumerate(index.shape):
        if axis != dim and extent > input.shape[axis]:
            raise RuntimeError(f"{op}: index shape {tuple(index.shape)} is larger than input shape "
                               f"{tuple(input.shape)} in dim {axis} (only dim {dim} may be larger)")
        if src is not None and (src.ndim != index.ndim or extent > src.shape[axis]):
            raise RuntimeError(f"{op}: index shape {tuple(index.shape)} must not be larger than "
                               f"src shape {tuple(src.shape)} in any dim")
    if src is not None and src.dtype != input.dtype:  # PyTorch writes no other dtype
        raise RuntimeError(f"{op}: expected src of the input's dtype {input.dtype.name}, got "
                           f"{src.dtype.name}; cast it with src.to(input.dtype)")
    check_range(op, index, dim, input.shape[dim] if input.ndim else 1, input._device)


def _along_dim_arguments(op: str, input: Tensor, dim: int, index, src=None):
    """(dim, index array, key) for the gather/scatter family, validated."""
    array = index_array(op, input, index)
    dim = normalize_dim(dim, input.ndim, op)
    _check_along_dim(op, input, array, dim, src if isinstance(src, Tensor) else None)
    return dim, array, along_dim_key(input._device.xp, array, dim)


def _trimmed(src, index):
    """`src` cut down to the index's shape (PyTorch reads only that corner of src)."""
    if not isinstance(src, Tensor) or src.shape == index.shape:
        return src
    return src[tuple(slice(0, extent) for extent in index.shape)]


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Pick values along `dim`: for dim=1, `out[i][j] = input[i][index[i][j]]`.

    `index` has as many dims as `input` and is no larger in the other dims; the
    result has the index's shape. The gradient adds back at the picked places.

    >>> import genesis
    >>> x = genesis.tensor([[1., 2.], [3., 4.]])
    >>> x.gather(1, genesis.tensor([[1, 1], [0, 1]]))
    tensor([[2., 2.],
            [3., 4.]])
    """
    if input.ndim == 0 and isinstance(index, Tensor) and index.ndim == 0:
        # NumPy can't pick along a dim of a 0-d array: pick from a 1-element vector
        return gather(input.reshape(1), 0, index.reshape(1)).reshape(())
    dim, _, key = _along_dim_arguments("gather", input, dim, index)
    return Gather.apply(input, key)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """A copy of `input` with `src` (a tensor, or a number `value`) written along `dim`:
    for dim=0, `out[index[i][j]][j] = src[i][j]`.

    With repeated indices the value written is one of the candidates (as in
    PyTorch, unspecified); use `scatter_add` to accumulate instead. `reduce` ("add" or
    "multiply", PyTorch's older spelling of `scatter_reduce` with "sum" and "prod") combines
    the values with the input's instead; genesis differentiates it, where PyTorch refuses.

    >>> import genesis
    >>> genesis.zeros(2, 3).scatter(1, genesis.tensor([[2], [0]]), 7.)
    tensor([[0., 0., 7.],
            [7., 0., 0.]])
    >>> genesis.ones(3).scatter(0, genesis.tensor([0, 0]), 2., reduce="multiply")
    tensor([4., 1., 1.])
    """
    src = _scatter_source("scatter", src, value)
    _, array, key = _along_dim_arguments("scatter", input, dim, index, src)
    if reduce is not None:
        return _scatter_reduced(input, _trimmed(src, array), array.shape, key, reduce)
    return Scatter.apply(input, _trimmed(src, array), key)


def _scatter_reduced(input: Tensor, src, shape: tuple, key: tuple, reduce: str) -> Tensor:
    """`input` with `src` (a tensor of the index's `shape`, or a number) added or multiplied
    in at `key` (repeats combine)."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=3)
        values = src.to(input.dtype)
    else:
        values = full(shape, src, dtype=input.dtype, device=input.device)
    if reduce == "add":
        return ScatterAdd.apply(input, values, key)
    return input * ScatterProduct.apply(values, key, input.shape)


def _scatter_source(op: str, src, value):
    if (src is None) == (value is None):
        raise TypeError(f"{op}: pass exactly one of src (a tensor or number) and value")
    return value if src is None else src


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of `input` with `src` added along `dim`; repeated indices accumulate.

    >>> import genesis
    >>> genesis.zeros(3).scatter_add(0, genesis.tensor([0, 2, 2]), genesis.tensor([1., 2., 3.]))
    tensor([1., 0., 5.])
    """
    input, src = autocast_inputs(PROMOTE_ON_CUDA, input, src)
    return ScatterAdd.apply(input, *_scatter_add_arguments("scatter_add", input, dim, index, src))


def _scatter_add_arguments(op: str, input: Tensor, dim: int, index, src) -> tuple:
    """(src cut to the index's shape, key), validated."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    _, array, key = _along_dim_arguments(op, input, dim, index, src)
    return _trimmed(src, array), key


def _slices_arguments(op: str, input: Tensor, dim: int, index):
    """(dim, 1-D index array, key) for the index_* family, validated."""
    array = index_array(op, input, index)
    dim = normalize_dim(dim, input.ndim, op)
    if array.ndim > 1:
        raise IndexError(f"{op}: index must be a vector (0-d or 1-D), got shape "
                         f"{tuple(array.shape)}")
    array = array.reshape(-1)
    check_range(op, array, dim, input.shape[dim] if input.ndim else 1, input._device)
    return dim, array, slices_key(dim, array)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `input` along `dim` at the 1-D `index` (repeats allowed).

    >>> import genesis
    >>> genesis.tensor([[1, 2, 3], [4, 5, 6]]).index_select(1, genesis.tensor([2, 0]))
    tensor([[3, 1],
            [6, 4]])
    """
    _, _, key = _slices_arguments("index_select", input, dim, index)
    return IndexSelect.apply(input, key)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of `input` with `alpha * source[i]` added to slice `index[i]` along `dim`.

    >>> import genesis
    >>> genesis.zeros(3, 2).index_add(0, genesis.tensor([0, 0]), genesis.ones(2, 2))
    tensor([[2., 2.],
            [0., 0.],
            [0., 0.]])
    """
    dim, array, key = _slices_arguments("index_add", input, dim, index)
    _check_source("index_add", input, dim, array, source)
    return IndexAdd.apply(input, source if alpha == 1 else source * alpha, key)


def _check_source(op: str, input: Tensor, dim: int, index, source) -> None:
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    expected = input._data.shape[:dim] + (index.shape[0],) + input._data.shape[dim + 1:]
    if tuple(source.shape) != expected:
        raise RuntimeError(f"{op}: source has shape {tuple(source.shape)}, but an input of shape "
                           f"{tuple(input.shape)} with {index.shape[0]} indices along dim {dim} "
                           f"needs {expected}")


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of `input` with the slices at `index` along `dim` set to `value` (a number or
    a 0-d tensor, which then gets a gradient).

    >>> import genesis
    >>> genesis.zeros(2, 3).index_fill(1, genesis.tensor([0, 2]), -1.)
    tensor([[-1.,  0., -1.],
            [-1.,  0., -1.]])
    """
    return IndexFill.apply(input, _scalar_value("index_fill", value),
                           _fill_key("index_fill", input, dim, index))


def _fill_key(op: str, input: Tensor, dim: int, index) -> tuple:
    """The slices to fill, each once (a repeated index must not count a 0-d value's
    gradient twice)."""
    dim, array, _ = _slices_arguments(op, input, dim, index)
    return slices_key(dim, input._device.xp.unique(array))


def _scalar_value(op: str, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"{op}: the value must be a number or a 0-d tensor, got a tensor of "
                           f"shape {tuple(value.shape)}")
    return value


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Pick values along `dim` at `indices`, broadcasting input and indices in the other
    dims (NumPy's take_along_axis); with no dim, index the flattened input.

    >>> import genesis
    >>> x = genesis.tensor([[10., 30., 20.], [60., 40., 50.]])
    >>> genesis.take_along_dim(x, x.argmax(dim=1, keepdim=True), dim=1)
    tensor([[30.],
            [60.]])
    """
    array = index_array("take_along_dim", input, indices, "indices")
    if dim is None:
        flat = array.reshape(-1)
        if check_range("take_along_dim", flat, 0, input._data.size, input._device,
                       negative=True) < 0:
            flat = flat % input._data.size
        return Gather.apply(input.reshape(-1), (flat, Ellipsis))
    dim = normalize_dim(dim, input.ndim, "take_along_dim")
    if array.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim: input and indices must have the same number of "
                           f"dims, got shapes {tuple(input.shape)} and {tuple(array.shape)}")
    shape = _broadcast_except(input.shape, array.shape, dim)
    xp = input._device.xp
    input_shape = shape[:dim] + (input.shape[dim],) + shape[dim + 1:]
    array = xp.broadcast_to(array, shape[:dim] + (array.shape[dim],) + shape[dim + 1:])
    if check_range("take_along_dim", array, dim, input.shape[dim], input._device,
                   negative=True) < 0:
        array = array % input.shape[dim]  # the gradient's scatter-add needs them non-negative
    expanded = input if input.shape == input_shape else input.expand(input_shape)
    return Gather.apply(expanded, along_dim_key(xp, array, dim))


def _broadcast_except(shape_a: tuple, shape_b: tuple, dim: int) -> tuple:
    try:
        return np.broadcast_shapes(shape_a[:dim] + (1,) + shape_a[dim + 1:],
                                   shape_b[:dim] + (1,) + shape_b[dim + 1:])
    except ValueError:
        raise RuntimeError(f"take_along_dim: input shape {shape_a} and indices shape {shape_b} "
                           f"can't be broadcast together outside dim {dim}") from None


def scatter_(self: Tensor, dim: int, index: Tensor, src=None, *, value=None,
             reduce: str | None = None) -> Tensor:
    """In-place `scatter`."""
    src = _scatter_source("scatter_", src, value)
    _, array, key = _along_dim_arguments("scatter_", self, dim, index, src)
    if reduce is not None:
        # computed from a clone: the product saves its factor, which the write would change
        return self.copy_(_scatter_reduced(self.clone(), _trimmed(src, array), array.shape, key,
                                           reduce))
    return apply_inplace(Scatter, self, _trimmed(src, array), key)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place `scatter_add`."""
    values, key = _scatter_add_arguments("scatter_add_", self, dim, index, src)
    return apply_inplace(ScatterAdd, self, values, key)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """In-place `index_add`."""
    dim, array, key = _slices_arguments("index_add_", self, dim, index)
    _check_source("index_add_", self, dim, array, source)
    return apply_inplace(IndexAdd, self, source if alpha == 1 else source * alpha, key)


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """In-place `index_fill`."""
    return apply_inplace(IndexFill, self, _scalar_value("index_fill_", value),
                         _fill_key("index_fill_", self, dim, index))


METHODS = {
    "gather": gather, "scatter": scatter, "scatter_add": scatter_add,
    "index_select": index_select, "index_add": index_add, "index_fill": index_fill,
    "take_along_dim": take_along_dim, "scatter_": scatter_, "scatter_add_": scatter_add_,
    "index_add_": index_add_, "index_fill_": index_fill_,
}


def _ints(rng, high, shape):
    return rng.integers(0, high, size=shape)


def _gather_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 1, _ints(rng, 4, (3, 2))), note="dim 1"),
        Sample((values(rng, (3, 4)), 0, _ints(rng, 3, (5, 4))), note="dim 0, repeats"),
        Sample((values(rng, (3, 4)), -1, _ints(rng, 4, (2, 6))), note="smaller in dim 0"),
        Sample((values(rng, (4, 3)), 0, _ints(rng, 4, (2, 3))), layout="transposed",
               note="transposed"),
        Sample((values(rng, (2, 3, 4)), 2, _ints(rng, 4, (2, 3, 4))), layout="strided",
               note="strided"),
        Sample((values(rng, ()), 0, np.array(0)), note="0-d"),
        Sample((values(rng, (3, 4)), 1, _ints(rng, 4, (0, 2))), note="empty index"),
    ]


def _scatter_samples(rng):
    values = samples.values
    unique_rows = np.array([[2, 0, 1, 0], [0, 2, 0, 2]])  # no repeats within a column
    return [
        Sample((values(rng, (3, 4)), 0, unique_rows, values(rng, (2, 4))), note="src"),
        Sample((values(rng, (3, 4)), 1, np.array([[3, 1], [0, 2], [1, 0]]), values(rng, (3, 2))),
               note="dim 1"),
        Sample((values(rng, (3, 4)), 0, unique_rows, values(rng, (2, 4))),
               grad=(False, False, True), note="input needs no grad"),
        Sample((values(rng, (3, 4)), 0, unique_rows, values(rng, (2, 4))),
               grad=(True, False, False), note="src needs no grad"),
        Sample((values(rng, (3, 4)), 0, unique_rows, 2.5), note="scalar value"),
        Sample((values(rng, (4, 3)), 1, np.array([[2, 0], [1, 2], [0, 1], [2, 1]]),
                values(rng, (4, 2))), layout="transposed", note="transposed"),
    ]


def _scatter_add_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 0, _ints(rng, 3, (5, 4)), values(rng, (5, 4))),
               note="repeats accumulate"),
        Sample((values(rng, (3, 4)), 1, _ints(rng, 4, (3, 6)), values(rng, (3, 6))),
               grad=(False, False, True), note="input needs no grad"),
        Sample((values(rng, (4, 3)), -1, _ints(rng, 3, (4, 3)), values(rng, (4, 3))),
               layout="transposed", note="transposed"),
    ]


def _index_select_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 0, np.array([2, 0, 2])), note="repeats"),
        Sample((values(rng, (3, 4, 2)), -2, np.array([3, 1])), note="middle dim"),
        Sample((values(rng, (4, 3)), 1, np.array([1])), layout="transposed", note="transposed"),
        Sample((values(rng, (3, 4)), 1, np.array(2)), note="0-d index"),
        Sample((values(rng, (3, 4)), 1, np.zeros(0, np.int64)), note="empty index"),
    ]


def _index_add_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 0, np.array([2, 0, 2]), values(rng, (3, 4))), note="repeats"),
        Sample((values(rng, (3, 4)), 1, np.array([3, 1]), values(rng, (3, 2))), {"alpha": 2.0},
               note="alpha"),
        Sample((values(rng, (3, 4)), 1, np.array([3, 1]), values(rng, (3, 2))),
               grad=(True, False, False), note="source needs no grad"),
    ]


def _index_fill_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), 1, np.array([3, 1]), -2.0), note="number"),
        Sample((values(rng, (3, 4)), 0, np.array([0, 0]), values(rng, ())), note="0-d tensor"),
        Sample((values(rng, (4, 3)), 0, np.array([1]), 0.5), layout="transposed",
               note="transposed"),
    ]


def _take_along_dim_samples(rng):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), _ints(rng, 4, (3, 2)), 1), note="dim 1"),
        Sample((values(rng, (3, 4)), _ints(rng, 3, (2, 1)), 0), note="broadcast indices"),
        Sample((values(rng, (1, 4)), _ints(rng, 4, (3, 2)), 1), note="broadcast input"),
        Sample((values(rng, (3, 4)), np.array([[-1], [0], [-4]]), 1), note="negative"),
        Sample((values(rng, (3, 4)), np.array([11, 0, 5, 5])), note="flattened"),
    ]


def _torch_take_along_dim(torch, a, indices, dim=None):
    if dim is None:
        return torch.take_along_dim(a, indices)
    return torch.take_along_dim(a, indices, dim)


OPS = [
    OpInfo("gather", gather, _gather_samples,
           torch=lambda torch, a, dim, index: torch.gather(a, dim, index)),
    OpInfo("scatter", scatter, _scatter_samples,
           torch=lambda torch, a, dim, index, src: torch.scatter(a, dim, index, src)),
    OpInfo("scatter_add", scatter_add, _scatter_add_samples,
           torch=lambda torch, a, dim, index, src: torch.scatter_add(a, dim, index, src)),
    OpInfo("index_select", index_select, _index_select_samples,
           torch=lambda torch, a, dim, index: torch.index_select(a, dim, index)),
    OpInfo("index_add", index_add, _index_add_samples,
           torch=lambda torch, a, dim, index, src, **kw: torch.index_add(a, dim, index, src, **kw)),
    OpInfo("index_fill", index_fill, _index_fill_samples,
           torch=lambda torch, a, dim, index, value: torch.index_fill(a, dim, index, value)),
    OpInfo("take_along_dim", take_along_dim, _take_along_dim_samples, torch=_torch_take_along_dim),
]
