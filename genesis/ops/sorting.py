"""Sorting along a dim: sort, argsort, topk, kthvalue.

The order is found on the arrays (a stable sort: equal elements keep their order, NaN
sorts as the largest value, as in PyTorch); the values are then gathered from the input
at those indices, so their gradient is Gather's (it goes back to where each value came
from).
"""
from __future__ import annotations

from collections import namedtuple

from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim
from .gather import gather
from .registry import OpInfo, Sample

__all__ = ["sort", "argsort", "topk", "kthvalue", "msort", "searchsorted", "bucketize"]

sort_result = namedtuple("sort", ("values", "indices"))
topk_result = namedtuple("topk", ("values", "indices"))
kthvalue_result = namedtuple("kthvalue", ("values", "indices"))


def _order(input: Tensor, dim: int, descending: bool):
    """The indices (an int64 array) that sort `input` along `dim`, stably."""
    xp, data = input._device.xp, input._data
    if data.dtype == bool:
        data = data.astype("int8")
    if not descending:
        return xp.argsort(data, axis=dim, kind="stable").astype("int64", copy=False)
    # descending and stable: sort the reversed input ascending, then reverse the result
    flipped = xp.argsort(xp.flip(data, axis=dim), axis=dim, kind="stable")
    return xp.flip(data.shape[dim] - 1 - flipped, axis=dim).astype("int64", copy=False)


def _dim_of(input: Tensor, dim: int, op: str) -> int:
    return normalize_dim(dim, max(input.ndim, 1), op)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> tuple:
    """(values, indices) of `input` sorted along `dim`; equal elements keep their order
    (`stable` is accepted: genesis's sort is always stable).

    >>> import genesis
    >>> genesis.tensor([3., 1., 2.]).sort(descending=True)
    sort(values=tensor([3., 2., 1.]), indices=tensor([0, 2, 1]))
    """
    if input.ndim == 0:
        return sort_result(input.clone(), wrap_array(input._device.xp.zeros((), "int64"), input._device))
    dim = _dim_of(input, dim, "sort")
    indices = wrap_array(_order(input, dim, descending), input._device)
    return sort_result(gather(input, dim, indices), indices)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort `input` along `dim` (stably).

    >>> import genesis
    >>> genesis.tensor([[2., 1.], [0., 5.]]).argsort(dim=1)
    tensor([[1, 0],
            [0, 1]])
    """
    if input.ndim == 0:
        return wrap_array(input._device.xp.zeros((), "int64"), input._device)
    return wrap_array(_order(input, _dim_of(input, dim, "argsort"), descending), input._device)


def msort(input: Tensor) -> Tensor:
    """`input` sorted along its first dim (the values of `sort(input, dim=0)`)."""
    return sort(input, dim=0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple:
    """(values, indices) of the `k` largest (`largest=False`: smallest) elements along
    `dim`, in order; of equal elements the first ones are taken.

    >>> import genesis
    >>> genesis.tensor([1., 5., 3., 5.]).topk(2)
    topk(values=tensor([5., 5.]), indices=tensor([1, 3]))
    """
    if input.ndim == 0:
        if k not in (0, 1):
            raise RuntimeError(f"topk: k ({k}) is out of range for a 0-d tensor (k must be 0 or 1)")
        return topk_result(*sort(input)) if k else topk_result(input.reshape(0), argsort(input).reshape(0))
    dim = _dim_of(input, dim, "topk")
    extent = input.shape[dim]
    if not isinstance(k, int) or not 0 <= k <= extent:
        raise RuntimeError(f"topk: selected index k ({k}) out of range: dim {dim} has {extent} "
                           "elements")
    order = _order(input, dim, descending=largest)
    xp = input._device.xp
    indices = wrap_array(xp.ascontiguousarray(xp.take(order, xp.arange(k), axis=dim)), input._device)
    return topk_result(gather(input, dim, indices), indices)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    """(values, indices) of the k-th smallest element (k counts from 1) along `dim`.

    >>> import genesis
    >>> genesis.tensor([[4., 1., 3.]]).kthvalue(2, dim=1)
    kthvalue(values=tensor([3.]), indices=tensor([2]))
    """
    if input.ndim == 0:
        if k != 1:
            raise RuntimeError(f"kthvalue: k ({k}) is out of range for a 0-d tensor")
        return kthvalue_result(input.clone(), argsort(input))
    dim = _dim_of(input, dim, "kthvalue")
    extent = input.shape[dim]
    if not isinstance(k, int) or not 1 <= k <= extent:
        raise RuntimeError(f"kthvalue: k ({k}) is out of range: dim {dim} has {extent} "
                           f"element{'s' if extent != 1 else ''} "
                           "(k counts from 1)")
    xp = input._device.xp
    order = _order(input, dim, descending=False)
    index = xp.ascontiguousarray(xp.take(order, xp.arange(k - 1, k), axis=dim))
    indices = wrap_array(index, input._device)
    values = gather(input, dim, indices)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return kthvalue_result(values, indices)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each value would go in the sorted last dim of `sorted_sequence` to keep it
    sorted (the first such place, or the last with `right=True` / `side="right"`); an N-D
    sequence is searched row by row, with `input` holding one row of values per row.

    >>> import genesis
    >>> searchsorted(genesis.tensor([1, 3, 5]), genesis.tensor([3, 6])).tolist()
    [1, 3]
    """
    side = side or ("right" if right else "left")
    xp = sorted_sequence._device.xp
    sequence = sorted_sequence._data
    if sorter is not None:
        sequence = xp.take_along_axis(sequence, sorter._data, -1)
    scalar = not isinstance(input, Tensor)
    values = xp.asarray(input) if scalar else input._data
    if sequence.ndim == 1:
        found = xp.searchsorted(sequence, values, side=side)
    else:
        if values.shape[:-1] != sequence.shape[:-1]:
            raise RuntimeError(f"searchsorted: the leading dims of the values {tuple(values.shape)} "
                               f"must match those of the sorted sequence {tuple(sequence.shape)}")
        rows = sequence.reshape(-1, sequence.shape[-1])
        value_rows = values.reshape(-1, values.shape[-1])
        found = xp.stack([xp.searchsorted(row, vals, side=side) for row, vals in zip(rows, value_rows)])
        found = found.reshape(values.shape)
    return wrap_array(xp.asarray(found, dtype="int32" if out_int32 else "int64"), sorted_sequence._device)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each value among the sorted 1-D `boundaries`: i with
    boundaries[i-1] < x <= boundaries[i] (with `right=True`: boundaries[i-1] <= x < boundaries[i])."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


METHODS = {"sort": sort, "argsort": argsort, "topk": topk, "kthvalue": kthvalue, "msort": msort}


def _samples(rng, *extra, **options):
    def make(*args, shape=(3, 5), layout="contiguous", values=samples.values, **kwargs):
        return Sample((values(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")
    return make


def _sort_samples(rng):
    make = _samples(rng)
    return [make(), make(0), make(1, True), make(-1, descending=True), make(shape=(2, 3, 4)),
            make(0, layout="transposed", shape=(4, 3)), make(shape=(6,)), make(shape=())]


def _topk_samples(rng):
    make = _samples(rng)
    return [make(2), make(3, 0, shape=(4, 3)), make(2, largest=False), make(1, shape=(6,)),
            make(2, 1, layout="transposed", shape=(4, 3)), make(4, -1, True, True)]


def _kthvalue_samples(rng):
    make = _samples(rng)
    return [make(2), make(1, 0, shape=(4, 3)), make(3, -1, True), make(2, shape=(5,))]


OPS = [
    OpInfo("sort", lambda *a, **k: sort(*a, **k).values, _sort_samples, kinks="ties",
           torch=lambda torch, *a, **k: torch.sort(*a, **k).values),
    OpInfo("argsort", argsort, _sort_samples, differentiable=False,
           torch=lambda torch, a, *args, **k: torch.argsort(
               a, stable=True, **dict(zip(("dim", "descending"), args)), **k)),
    OpInfo("topk", lambda *a, **k: topk(*a, **k).values, _topk_samples, kinks="ties",
           torch=lambda torch, *a, **k: torch.topk(*a, **k).values),
    OpInfo("kthvalue", lambda *a, **k: kthvalue(*a, **k).values, _kthvalue_samples, kinks="ties",
           torch=lambda torch, *a, **k: torch.kthvalue(*a, **k).values),
]
