"""Array utilities PyTorch programs call, mostly compositions of genesis ops (their gradients
are those ops'): `Tensor.unfold`, `as_strided`, `combinations`, `aminmax`, `trapezoid` /
`trapz` / `cumulative_trapezoid`, `vander`, `renorm`, `vdot`; the integer- or bool-valued
`unique_consecutive`, `isin`, `unravel_index`, `histogram`; the dtype rules `result_type`,
`promote_types`, `can_cast` (the window functions are in genesis.ops.signal_windows).

`unfold` is a view in PyTorch; here it is a copy made by one gather, so writing into the
result does not change the input (its gradient adds back every place an element was read,
as PyTorch's does). `as_strided` is a view of the input's storage, as in PyTorch.
"""
from __future__ import annotations

import itertools
import math
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autocast_rules import PROMOTE_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from ..creation import ones, zeros
from ..tensor import Tensor, wrap_array
from . import samples
from ._no_derivative import without_derivative
from ._operands import normalize_dim, result_type as _result_numpy_dtype
from .composites import diff
from .cumulative import cumsum, cumprod
from .extrema import amax, amin
from .gather import Gather, IndexSelect
from .join import cat
from .norm import vector_norm
from .registry import OpInfo, Sample
from .scatter_family import _write_back
from .tensor_attributes import _storage_root, storage_offset as storage_offset_of
from .view_func import strided_view
from .where import where

__all__ = ["as_strided", "unique_consecutive", "combinations", "isin", "aminmax",
           "unravel_index", "trapezoid", "trapz", "cumulative_trapezoid", "vander", "histogram",
           "renorm", "vdot", "result_type", "promote_types", "can_cast"]

aminmax_result = namedtuple("aminmax", ("min", "max"))
histogram_result = namedtuple("histogram", ("hist", "bin_edges"))


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every slice of length `size` along `dimension`, `step` apart, as a new last dim (a
    copy; PyTorch returns a view).

    >>> import genesis
    >>> genesis.arange(5.).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if input.ndim == 0:
        if size > 1:
            raise RuntimeError(f"unfold: maximum size for a 0-d tensor is 1 but size is {size}")
        return input.reshape(1)[:size]
    dim = normalize_dim(dimension, input.ndim, "unfold")
    extent = input.shape[dim]
    if size > extent:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {dim} is {extent} but "
                           f"size is {size}")
    xp = input._device.xp
    count = (extent - size) // step + 1
    index = (xp.arange(count)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
    picked = IndexSelect.apply(input, (slice(None),) * dim + (index, Ellipsis))
    shape = input.shape[:dim] + (count, size) + input.shape[dim + 1:]
    return picked.reshape(shape).movedim(dim + 1, -1)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of the input's storage: the elements at `storage_offset + sum(i_k * stride_k)`
    (in elements; the offset defaults to the input's own) in an array of shape `size`.
    Overlapping reads add their gradients.

    >>> import genesis
    >>> genesis.arange(6.).as_strided((2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape: size {size}, "
                           f"stride {stride}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: negative strides are not supported, got {stride}")
    if storage_offset is None:
        storage_offset = storage_offset_of(input)
    if any(s < 0 for s in size) or storage_offset < 0:
        raise RuntimeError(f"as_strided: sizes {size} and storage offset {storage_offset} must "
                           "not be negative")
    needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) \
        if all(size) else 0
    held = _storage_root(input._data).size
    if needed > held:
        raise RuntimeError(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage "
                           f"offset {storage_offset} need a storage of {needed} elements: out "
                           f"of bounds for storage of size {held} (elements)")
    return strided_view(input, size, stride, int(storage_offset))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """The input with each run of equal consecutive elements (or slices along `dim`) kept
    once; with the inverse indices and the run lengths when asked. Not differentiable.

    >>> import genesis
    >>> genesis.tensor([1, 1, 2, 2, 3, 1]).unique_consecutive(return_counts=True)
    (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    xp, device = input._device.xp, input._device
    if dim is None:
        rows = input._data.reshape(-1, 1)
        moved = input._data.reshape(-1)
    else:
        axis = normalize_dim(dim, input.ndim, "unique_consecutive")
        moved = xp.moveaxis(input._data, axis, 0)
        rows = moved.reshape(moved.shape[0], -1)
    starts = xp.ones(rows.shape[0], bool)
    if rows.shape[0] > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    kept = moved[starts]
    values = kept if dim is None else xp.moveaxis(kept, 0, axis)
    result = [without_derivative(input, values, "unique_consecutive")]
    if return_inverse:
        inverse = xp.cumsum(starts) - 1
        result.append(wrap_array(inverse.reshape(input.shape if dim is None else -1)
                                 .astype(np.int64), device))
    if return_counts:
        positions = xp.concatenate([xp.nonzero(starts)[0], xp.asarray([rows.shape[0]])])
        result.append(wrap_array(xp.diff(positions).astype(np.int64), device))
    return result[0] if len(result) == 1 else tuple(result)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-`r` combinations of the 1-D input's elements, one per row (itertools'
    order); with replacement elements may repeat.

    >>> import genesis
    >>> genesis.combinations(genesis.tensor([1., 2., 3.]))
    tensor([[1., 2.],
            [1., 3.],
            [2., 3.]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"combinations: expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"combinations: r must be non-negative, got {r}")
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    xp = input._device.xp
    if r == 0:
        return Gather.apply(input, (xp.zeros(0, np.int64), Ellipsis))
    picks = np.array(list(choose(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return Gather.apply(input, (xp.asarray(picks), Ellipsis))


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of `elements` is among `test_elements` (either may be a number): a bool
    tensor of the elements' shape.

    >>> import genesis
    >>> genesis.isin(genesis.tensor([1, 2, 3]), genesis.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin: elements or test_elements must be a Tensor")
    device = (elements if isinstance(elements, Tensor) else test_elements)._device
    xp = device.xp
    values = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    tests = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    return wrap_array(xp.isin(values, tests, assume_unique=assume_unique, invert=invert), device)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):
    """(min, max) of all elements or along `dim`, as a named tuple; gradients are shared
    evenly among tied extremes, as `amin` and `amax`.

    >>> import genesis
    >>> genesis.tensor([[1., 5.], [3., 0.]]).aminmax(dim=1)
    aminmax(min=tensor([1., 0.]), max=tensor([5., 3.]))
    """
    if input.numel() == 0:
        raise RuntimeError("aminmax: cannot compute the min and max of an empty tensor; pass a "
                           "non-empty input")
    dims = () if dim is None else dim
    return aminmax_result(amin(input, dims, keepdim), amax(input, dims, keepdim))


def unravel_index(indices, shape) -> tuple:
    """The coordinates in an array of `shape` of flat (row-major) `indices`: one int64
    tensor per dim.

    >>> import genesis
    >>> genesis.unravel_index(genesis.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index: indices must be an integer Tensor, got "
                        f"{type(indices).__name__}")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expected indices to be an integer tensor, got "
                        f"{indices.dtype!r}; convert with .long()")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(extent < 0 for extent in shape):
        raise RuntimeError(f"unravel_index: sizes must be non-negative, got {shape}")
    size = math.prod(shape)
    data = indices._data.astype(np.int64)
    if data.size and (int(data.min()) < -size or int(data.max()) >= size):
        raise RuntimeError(f"unravel_index: an index is out of bounds for shape {shape} "
                           f"(allowed: [{-size}, {size - 1}])")
    data = data % size if size else data
    coordinates = []
    for extent in reversed(shape):
        coordinates.append(data % extent)
        data = data // extent
    return tuple(wrap_array(c, indices._device) for c in reversed(coordinates))


def _trapezoid_parts(op: str, y: Tensor, x, dx, dim: int):
    """(dim, the summands of the rule along dim: (y[i] + y[i+1]) / 2 * width)."""
    dim = normalize_dim(dim, y.ndim, op)
    if x is not None and dx is not None:
        raise TypeError(f"{op}: pass x or dx, not both")
    length = y.shape[dim]
    pairs = y.narrow(dim, 0, max(length - 1, 0)) + y.narrow(dim, min(1, length), max(length - 1, 0))
    if x is None:
        return dim, pairs * ((1.0 if dx is None else dx) / 2)
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a Tensor, got {type(x).__name__}; pass a spacing as dx=")
    if x.ndim == 1:
        if x.shape[0] != length:
            raise RuntimeError(f"{op}: there must be one `x` value for each sample point: x has "
                               f"{x.shape[0]}, y has {length} along dim {dim}")
        shape = [1] * y.ndim
        shape[dim] = max(length - 1, 0)
        widths = diff(x).reshape(shape)
    else:
        widths = diff(x, dim=dim - y.ndim)
    return dim, pairs * widths / 2


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The integral of `y` along `dim` by the trapezoidal rule, at sample points `x` (1-D,
    or broadcastable to y) or spaced `dx` apart (1 by default).

    >>> import genesis
    >>> genesis.trapezoid(genesis.tensor([1., 2., 3.]), dx=2.0)
    tensor(8.)
    """
    dim, parts = _trapezoid_parts("trapezoid", y, x, dx, dim)
    return parts.sum(dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """Same as `trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral of `y` along `dim` (one element shorter).

    >>> import genesis
    >>> genesis.cumulative_trapezoid(genesis.tensor([1., 2., 3.]))
    tensor([1.5000, 4.0000])
    """
    dim, parts = _trapezoid_parts("cumulative_trapezoid", y, x, dx, dim)
    return cumsum(parts, dim)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D `x`: column j is x ** (N - 1 - j) (x ** j with
    `increasing`); N defaults to len(x). Integer inputs give int64.

    >>> import genesis
    >>> genesis.vander(genesis.tensor([1., 2., 3.]), N=3)
    tensor([[1., 1., 1.],
            [4., 2., 1.],
            [9., 3., 1.]])
    """
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {list(x.shape)}")
    count = x.shape[0] if N is None else N
    if count < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {count}")
    if not x.is_floating_point():
        x = x.to(dtypes.int64)
    if count == 0:
        return zeros(x.shape[0], 0, dtype=x.dtype, device=x._device)
    column = x.unsqueeze(1)
    powers = cumprod(cat([ones(x.shape[0], 1, dtype=x.dtype, device=x._device),
                          column.expand(x.shape[0], count - 1)], 1), 1)
    return powers if increasing else powers.flip(1)


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None,
              density: bool = False):
    """(hist, bin_edges): counts (or weight sums, or a density) of the floating input's
    elements in `bins` equal bins over `range` (the data's span by default), or between the
    edges of a 1-D `bins` tensor. Not differentiable.

    >>> import genesis
    >>> genesis.tensor([1., 2., 1.]).histogram(2)
    histogram(hist=tensor([2., 1.]), bin_edges=tensor([1.0000, 1.5000, 2.0000]))
    """
    if not input.is_floating_point():
        raise RuntimeError(f"histogram: input must be a floating tensor, got {input.dtype!r}; "
                           "convert with .float()")
    xp, device = input._device.xp, input._device
    data = input._data.reshape(-1)
    edges = bins._data if isinstance(bins, Tensor) else int(bins)
    if isinstance(edges, int) and edges <= 0:
        raise RuntimeError(f"histogram: bins must be > 0, got {edges}")
    weights = None if weight is None else weight._data.reshape(-1)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(f"histogram: weight must have the input's shape {tuple(input.shape)}, "
                           f"got {tuple(weight.shape)}")
    hist, bin_edges = xp.histogram(data, edges, range=range, weights=weights, density=density)
    return histogram_result(wrap_array(hist.astype(input._data.dtype), device),
                            wrap_array(bin_edges.astype(input._data.dtype), device))


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """The input with every slice along `dim` whose p-norm exceeds `maxnorm` scaled down to
    norm `maxnorm` (times 1 / (1 + 1e-7 / norm), as PyTorch).

    >>> import genesis
    >>> genesis.tensor([[3., 4.], [0.3, 0.4]]).renorm(2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive norm p={p} is not supported; pass p > 0")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim}")
    dim = normalize_dim(dim, input.ndim, "renorm")
    others = tuple(axis for axis in range(input.ndim) if axis != dim)
    norms = vector_norm(input, p, others, keepdim=True)
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor



def renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place `renorm`."""
    return _write_back("renorm_", self, lambda copy: renorm(copy, p, dim, maxnorm))


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors of the same dtype and length.

    >>> import genesis
    >>> genesis.vdot(genesis.tensor([1., 2.]), genesis.tensor([3., 4.]))
    tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"vdot: 1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    input, other = autocast_inputs(PROMOTE_ON_CUDA, input, other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"vdot: expected both vectors to have the same dtype, but found "
                           f"{input.dtype.name} and {other.dtype.name}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"vdot: inconsistent tensor size, expected tensor [{input.shape[0]}] "
                           f"and src [{other.shape[0]}] to have the same number of elements")
    with outside_autocast():  # one op in PyTorch: its sum is not autocast on its own
        return (input * other).sum()


def result_type(tensor1, tensor2) -> dtypes.DType:
    """The dtype an arithmetic op on the two (tensors or numbers) gives.

    >>> import genesis
    >>> genesis.result_type(genesis.tensor([1, 2]), 2.5)
    genesis.float32
    """
    return dtypes.from_numpy_dtype(_result_numpy_dtype(tensor1, tensor2))


def promote_types(type1, type2) -> dtypes.DType:
    """The smallest dtype both dtypes convert to without losing their kind.

    >>> import genesis
    >>> genesis.promote_types(genesis.int32, genesis.float16)
    genesis.float16
    """
    return dtypes.promote_types(dtypes.get_dtype(type1), dtypes.get_dtype(type2))


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow `from_` to `to` (no float to integer, no
    non-bool to bool).

    >>> import genesis
    >>> genesis.can_cast(genesis.float64, genesis.int32)
    False
    >>> genesis.can_cast(genesis.int8, genesis.float16)
    True
    """
    source, target = dtypes.get_dtype(from_), dtypes.get_dtype(to)
    return source.category <= target.category


METHODS = {"unfold": unfold, "as_strided": as_strided, "unique_consecutive": unique_consecutive,
           "aminmax": aminmax, "histogram": histogram, "renorm": renorm, "renorm_": renorm_,
           "vdot": vdot}


def _unfold_samples(rng):
    values = samples.values
    return [Sample((values(rng, (7,)), 0, 3, 2), note="overlap-free"),
            Sample((values(rng, (3, 5)), 1, 2, 1), note="overlapping"),
            Sample((values(rng, (4, 3, 2)), 0, 2, 3), layout="transposed", note="transposed"),
            Sample((values(rng, (3, 4)), -1, 4, 1), layout="strided", note="whole dim")]


def _as_strided_samples(rng):
    values = samples.values
    return [Sample((values(rng, (3, 4)), (2, 2), (1, 2)), note="transposing"),
            Sample((values(rng, (10,)), (3, 4), (2, 1), 1), note="overlapping, offset"),
            Sample((values(rng, (2, 3)), (3,), (0,), 4), note="repeated element")]


def _combinations_samples(rng):
    values = samples.values
    return [Sample((values(rng, (4,)),), note="pairs"),
            Sample((values(rng, (4,)), 3), note="triples"),
            Sample((values(rng, (3,)), 2, True), note="with replacement"),
            Sample((values(rng, (5,)), 2), layout="strided", note="strided")]


def _aminmax_samples(rng):
    values = samples.values
    return [Sample((values(rng, (3, 4)),), note="all"),
            Sample((values(rng, (3, 4)),), {"dim": 1}, note="dim 1"),
            Sample((values(rng, (4, 3)),), {"dim": 0, "keepdim": True}, layout="transposed",
                   note="keepdim, transposed")]


def _trapezoid_samples(rng):
    values = samples.values
    x = np.sort(values(rng, (5,)))
    return [Sample((values(rng, (3, 5)),), note="dx 1"),
            Sample((values(rng, (3, 5)),), {"dx": 0.5, "dim": 1}, note="dx"),
            Sample((values(rng, (3, 5)), x), note="1-D x"),
            Sample((values(rng, (5, 3)), values(rng, (5, 3))), {"dim": 0}, note="x of y's shape"),
            Sample((values(rng, (5, 3)), values(rng, (5, 1))), {"dim": 0}, grad=(False, True),
                   note="broadcast x, y needs no grad"),
            Sample((values(rng, (4, 5)), x), layout="transposed", note="transposed")]


def _vander_samples(rng):
    values = samples.values
    return [Sample((values(rng, (4,)),), note="square"),
            Sample((values(rng, (3,)), 5, True), note="increasing, wide"),
            Sample((values(rng, (5,)), 2), layout="strided", note="strided, narrow")]


def _renorm_samples(rng):
    values = samples.values
    return [Sample((values(rng, (3, 4)), 2, 0, 1.5), note="p 2"),
            Sample((values(rng, (3, 4, 2)), 1, 1, 2.0), note="p 1"),
            Sample((values(rng, (4, 3)), 3, 1, 1.0), layout="transposed", note="p 3, transposed")]


def _vdot_samples(rng):
    values = samples.values
    return [Sample((values(rng, (4,)), values(rng, (4,))), note="plain"),
            Sample((values(rng, (4,)), values(rng, (4,))), grad=(False, True),
                   note="input needs no grad"),
            Sample((values(rng, (5,)), values(rng, (5,))), layout="strided", note="strided")]


def _unique_consecutive_samples(rng):
    runs = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 1.0, 1.0])
    table = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 2.0], [1.0, 2.0]])
    return [Sample((runs,), note="values"),
            Sample((runs.reshape(2, 4),), {"return_inverse": True, "return_counts": True},
                   note="inverse and counts"),
            Sample((table,), {"dim": 0, "return_counts": True}, note="rows"),
            Sample((table.T.copy(),), {"dim": 1, "return_inverse": True}, note="columns")]


def _torch_vander(torch, x, N=None, increasing=False):
    """torch.vander's values as powers: its own backward fails (an in-place cumprod)."""
    powers = torch.stack([x ** k for k in range(len(x) if N is None else N)], 1)
    return powers if increasing else powers.flip(1)


def _torch_trapezoid(torch, y, x=None, **kwargs):
    return torch.trapezoid(y, **kwargs) if x is None else torch.trapezoid(y, x, **kwargs)


def _torch_cumulative_trapezoid(torch, y, x=None, **kwargs):
    if x is None:
        return torch.cumulative_trapezoid(y, **kwargs)
    return torch.cumulative_trapezoid(y, x, **kwargs)


OPS = [
    OpInfo("tensor_unfold", unfold, _unfold_samples,
           torch=lambda torch, a, *args: a.unfold(*args)),
    OpInfo("as_strided", as_strided, _as_strided_samples,
           torch=lambda torch, a, *args: torch.as_strided(a, *args)),
    OpInfo("combinations", combinations, _combinations_samples,
           torch=lambda torch, *args: torch.combinations(*args)),
    OpInfo("aminmax", aminmax, _aminmax_samples, kinks="ties",
           torch=lambda torch, a, **kw: torch.aminmax(a, **kw)),
    OpInfo("trapezoid", trapezoid, _trapezoid_samples, torch=_torch_trapezoid),
    OpInfo("cumulative_trapezoid", cumulative_trapezoid, _trapezoid_samples,
           torch=_torch_cumulative_trapezoid),
    OpInfo("vander", vander, _vander_samples, torch=_torch_vander),
    OpInfo("renorm", renorm, _renorm_samples, torch=lambda torch, *args: torch.renorm(*args)),
    OpInfo("vdot", vdot, _vdot_samples, torch=lambda torch, a, b: torch.vdot(a, b)),
    OpInfo("unique_consecutive", unique_consecutive, _unique_consecutive_samples,
           differentiable=False,
           torch=lambda torch, a, **kw: torch.unique_consecutive(a, **kw)),
]
