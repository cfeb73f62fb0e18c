"""Indexing: `t[key]` and `t[key] = value`.

Basic keys (ints, slices, None, Ellipsis) give views; integer-array and
boolean-mask keys give copies. The gradient of `t[key]` scatters back with
accumulation, so repeated indices add up.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.function import Op
from ..device import cpu, transfer, writeable
from .. import dtypes
from ..dtypes import check_fits
from ..sizes import describe_value
from ..tensor import Tensor, to_array
from . import samples
from ._scatter import add_at
from .inplace import apply_inplace
from .overlap import assign_through
from .registry import OpInfo, Sample

__all__ = []

_PYTHON_NUMBERS = (float, int, bool)  # checked first: an ABC isinstance costs more


def array_key(key, device):
    """A tuple NumPy/CuPy can index with: Tensors become arrays (0-d integer and bool tensors
    become Python numbers, as PyTorch treats them), and a trailing Ellipsis makes integer
    indexing return a 0-d view instead of a scalar copy."""
    items = key if isinstance(key, tuple) else (key,)
    converted = []
    for item in items:
        if isinstance(item, Tensor):
            item = _index_array(item, device)
        elif isinstance(item, list):
            item = device.xp.asarray(item)
        elif item.__class__ is slice and item.step == 0:
            raise ValueError("slice step cannot be zero")
        converted.append(item)
    if not any(item is Ellipsis for item in converted):
        converted.append(Ellipsis)
    return tuple(converted)


def _index_array(item: Tensor, device):
    kind = item._data.dtype.kind
    if kind not in "biu":
        raise IndexError(f"tensors used as indices must be integer or bool tensors, got "
                         f"{item.dtype!r}; convert with .long() or .bool()")
    if item._data.ndim == 0:
        return bool(item.item()) if kind == "b" else int(item.item())
    if item._device is device:
        return item._data
    if item._device is cpu:  # as in PyTorch: CPU indices work for a tensor on any device
        return transfer(item._data, cpu, device)
    raise IndexError(f"the index tensor is on {item._device}, the indexed one on {device}: "
                     f"indices must be on the CPU or on the indexed tensor's device; move them "
                     f"with .to('{device}')")


def _is_advanced(key: tuple) -> bool:
    """Whether `key` (array_key's tuple) holds an index array or a bool: a copy, not a view."""
    for item in key:
        if item.__class__ in _BASIC_ITEMS:  # the usual items, without a failed getattr each
            continue
        if getattr(item, "ndim", 0) > 0 or isinstance(item, bool):
            return True
    return False


_BASIC_ITEMS = frozenset({int, slice, type(None), type(Ellipsis)})  # (bool is not int here)


def _index(array, key, shape, op="getitem"):
    try:
        return array[key]
    except IndexError as error:
        raise index_error(op, key, shape, error) from None


def index_error(op: str, key: tuple, shape, error: Exception) -> IndexError:
    """An IndexError naming the op, the key and the indexed shape, with NumPy's reason."""
    items = key[:-1] if key and key[-1] is Ellipsis else key
    described = ", ".join("..." if item is Ellipsis else _describe_item(item) for item in items)
    return IndexError(f"{op}: index [{described}] is invalid for a tensor of shape "
                      f"{tuple(shape)}: {error}")


def _describe_item(item) -> str:
    if getattr(item, "ndim", 0) > 0:
        text = f"tensor({item.tolist()}"[:60]
        return text + ("...)" if len(text) == 60 else ")")
    if isinstance(item, slice):
        parts = ["" if part is None else str(part) for part in (item.start, item.stop, item.step)]
        return ":".join(parts[:2] if item.step is None else parts)
    return repr(item)


class GetItem(Op):
    """t[key]: a view for basic keys, a copy for advanced ones."""

    is_view = True
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape = a.shape
        _keep_key(ctx, key)
        return _index(a._data, key, a.shape)

    @staticmethod
    def backward(ctx, grad):
        return IndexScatter.apply(grad, ctx.shape, _kept_key(ctx)), None


class Select(GetItem):
    """One index along one dim, removing that dim: `t[1]`, `t[:, -1]` (a view)."""


class Slice(GetItem):
    """A range along a dim: `t[1:3]`, `t[:, ::2]` (a view)."""


class Index(GetItem):
    """Advanced indexing with index tensors, lists or masks: `t[idx]`, `t[mask]` (a copy)."""


class UnsqueezeByIndex(GetItem):
    """`t[None]`, `t[:, None]`: new dims of extent 1 (a view)."""

    node_name = "Unsqueeze"


class AliasByIndex(GetItem):
    """`t[...]`, `t[:, :]`: the whole tensor (a view)."""

    node_name = "Alias"


def indexing_function(key, array_key: tuple, shape) -> type:
    """The GetItem whose node PyTorch puts on top for `t[key]` (`array_key` is
    array_key's tuple for it), so a graph names indexing as PyTorch's does.

    PyTorch applies a basic key item by item (a select per int, a slice per range that
    does not span its whole dim, an unsqueeze per None) and advanced indexing last; genesis
    indexes in one step, named after PyTorch's last step. A lone slice is always a Slice.

    >>> import genesis
    >>> x = genesis.zeros(3, 4, requires_grad=True)
    >>> x[1:].grad_fn, x[0, :].grad_fn, x[[0, 2]].grad_fn, x[:, None].grad_fn
    (<SliceBackward>, <SelectBackward>, <IndexBackward>, <UnsqueezeBackward>)
    """
    if key.__class__ is slice:
        return Slice
    if _is_advanced(array_key):
        return Index
    spanned = sum(item is not None and item is not Ellipsis for item in array_key)
    dim, last = 0, AliasByIndex
    for item in array_key:
        if item is Ellipsis:
            dim += len(shape) - spanned
        elif item is None:
            last = UnsqueezeByIndex
        elif item.__class__ is slice:
            if dim >= len(shape) or not _spans(item, shape[dim]):
                last = Slice
            dim += 1
        else:
            last = Select
            dim += 1
    return last


def _spans(item: slice, extent: int) -> bool:
    """Whether PyTorch skips slice `item` as the whole dim: its bounds as written (a negative
    start is a slice even where it reaches the first element)."""
    return (item.start in (None, 0) and item.step in (None, 1)
            and (item.stop is None or item.stop >= extent))


class IndexScatter(Op):
    """Zeros of `shape` with `values` added at `key` (the adjoint of indexing)."""

    @staticmethod
    def forward(ctx, values, shape, key):
        ctx.key = key
        xp = values._device.xp
        out = xp.zeros(shape, values._data.dtype)
        if _is_advanced(key):
            add_at(xp, out, key, values._data)
        else:
            out[key] = values._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return GetItem.apply(grad, ctx.key), None, None


class IndexPut(Op):
    """t with t[key] replaced by value (used in place for `t[key] = value`)."""

    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, a, value, key):
        _keep_key(ctx, key)
        out = a._data.copy()
        _put(out, key, _value_array(a, value), a.shape)
        return out

    @staticmethod
    def forward_inplace(target, value, key):
        _put(target._data, key, _value_array(target, value), target.shape)

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        key = _kept_key(ctx)
        grad_a = IndexZero.apply(grad, key) if needs[0] else None
        grad_value = GetItem.apply(grad, key) if needs[1] else None
        return grad_a, grad_value, None


def _keep_key(ctx, key: tuple) -> None:
    """A key with index arrays is saved for backward, as PyTorch saves index tensors (so a
    second backward through a freed graph is refused); a basic key is kept on ctx."""
    if _is_advanced(key):
        ctx.save_for_backward(key)
    else:
        ctx.key = key


def _kept_key(ctx) -> tuple:
    return ctx.key if "key" in ctx.__dict__ else ctx.saved_tensors[0]


class IndexZero(Op):
    """`a` with zeros at `key` (the gradient of the part of the target that was overwritten)."""

    @staticmethod
    def forward(ctx, a, key):
        ctx.key = key
        out = a._data.copy()
        out[key] = 0
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexZero.apply(grad, ctx.key), None


def _put(array, key, value, shape) -> None:
    try:
        array[key] = value
    except IndexError as error:
        raise index_error("setitem", key, shape, error) from None
    except ValueError as error:
        failure = error
    else:
        return
    try:  # a read-only array: a part of a broadcast view may still be written (as in PyTorch)
        if not writeable(array) and assign_through(array, key, value, _is_advanced(key)):
            return
    except ValueError as error:
        failure = error
    raise RuntimeError(f"setitem: can't assign a value of shape {tuple(np.shape(value))} "
                       f"to the indexed region: {failure}") from None


def _value_array(target: Tensor, value):
    if isinstance(value, Tensor):
        if value._device != target._device:
            raise RuntimeError(f"setitem: the value is on {value._device}, the tensor on "
                               f"{target._device}")
        return value._data
    return value


_HALF_WIDTH = (dtypes.float16, dtypes.bfloat16)


def _checked_value(target: Tensor, value):
    """A number or list to assign, checked against the target's dtype; lists become arrays."""
    if value.__class__ in _PYTHON_NUMBERS or isinstance(value, numbers.Number | np.bool_):
        if target.dtype in _HALF_WIDTH:
            # as PyTorch: a float beyond the dtype's range is stored as ±inf; an int must
            # still be an int64
            if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
                check_fits(value, dtypes.int64, "setitem")
            return _saturated(value, target.dtype)
        check_fits(value, target.dtype, "setitem")
        return value
    if isinstance(value, list | tuple):
        return to_array(value, target.dtype, target._device)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"setitem: can't assign {describe_value(value)} to a {target.dtype.name} "
                        "tensor; assign a number, a tensor or a (nested) list of numbers")
    return value


def _saturated(value, dtype):
    """A finite float beyond `dtype`'s largest as the infinity of its sign (what a cast
    gives, without NumPy's overflow warning)."""
    largest = dtypes.value_range(dtype)[1]
    if not isinstance(value, bool | np.bool_) and math.isfinite(value) and abs(value) > largest:
        return math.copysign(math.inf, value)
    return value


def getitem(input: Tensor, key) -> Tensor:
    """`input[key]` with NumPy/PyTorch semantics.

    >>> import genesis
    >>> x = genesis.arange(12).reshape(3, 4)
    >>> x[1:, ::2]
    tensor([[ 4,  6],
            [ 8, 10]])
    """
    if key.__class__ is int:  # t[i], a DataLoader's sample: array_key's tuple, made directly
        return Select.apply(input, (key, Ellipsis))
    converted = array_key(key, input._device)
    return indexing_function(key, converted, input.shape).apply(input, converted)


def setitem(input: Tensor, key, value) -> None:
    """`input[key] = value`: in place; differentiable w.r.t. `value` and the kept part of `input`."""
    key = array_key(key, input._device)
    if not isinstance(value, Tensor):
        value = _checked_value(input, value)
    elif value.dtype != input.dtype and _writes_only_its_dtype(key, value):
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype.name} for the destination and {value.dtype.name} for "
                           f"the source; cast the value with .to({input.dtype})")
    apply_inplace(IndexPut, input, value, key)


def _writes_only_its_dtype(key: tuple, value: Tensor) -> bool:
    """Whether PyTorch writes `value` at `key` (an `array_key`) with index_put, which takes
    only the destination's dtype: a key with an index array (a tensor or list), except a
    lone bool mask given one value (PyTorch's masked_fill). Other keys copy_ into a view,
    which casts."""
    arrays = [item for item in key if getattr(item, "ndim", 0) > 0]  # (as _is_advanced)
    if not arrays:
        return False
    lone_mask = len(key) == 2 and len(arrays) == 1 and arrays[0].dtype == bool
    return not (lone_mask and value.numel() == 1)


METHODS = {"__getitem__": getitem, "__setitem__": setitem}


def _index_samples(rng):
    def sample(key, shape=(4, 5), layout="contiguous"):
        return Sample((samples.values(rng, shape), key), layout=layout, note=repr(key))

    return [
        sample(1), sample(-1), sample((slice(1, 3), slice(None, None, 2))),
        sample((Ellipsis, None, 2)), sample((slice(None), 0), layout="transposed"),
        sample(np.array([0, 2, 2])),  # repeated indices accumulate
        sample((np.array([0, 3]), np.array([1, 4]))),
        sample(np.array([True, False, True, False])),
        sample((slice(None), np.array([4, 0, 4]))), sample((np.array([[1], [3]]), np.array([0, 2]))),
        sample(np.array([[True, False] * 2 + [True]] * 4)), sample((True, slice(1, None))),
        sample((slice(None, None, 2), Ellipsis, None)),
        sample(np.array([-1, 0]), shape=(3, 2, 2), layout="strided"),
    ]


def _assigned(input: Tensor, key, value) -> Tensor:
    """`input[key] = value` on a copy of `input` (a leaf that requires grad can't be written in
    place); returns the copy."""
    out = input.clone()
    setitem(out, key, value)
    return out


def _torch_assigned(torch, a, key, value):
    out = a.clone()
    out[_torch_key(torch, key)] = value
    return out


def _setitem_samples(rng):
    """Keys that name each position once (a repeated position keeps one of the values, which
    one NumPy does not promise), values of the region's shape, broadcast, or a number."""
    def sample(key, value, shape=(4, 5), layout="contiguous", grad=None, note=""):
        return Sample((samples.values(rng, shape), key, value), layout=layout, grad=grad,
                      note=note or repr(key))

    def region(shape):
        return samples.values(rng, shape)

    return [
        sample((slice(1, 3), slice(None, None, 2)), region((2, 3))),
        sample(1, region((5,)), layout="transposed", note="row, transposed"),
        sample((slice(None), -1), region((1,)), note="column, broadcast value"),
        sample((Ellipsis, None, 2), region((3, 1, 1)), shape=(3, 4, 4), layout="strided",
               note="Ellipsis, None, strided"),
        sample((np.array([0, 3]), np.array([1, 4])), region((2,)), note="index arrays"),
        sample(np.array([2, 0]), region((2, 5)), note="index tensor"),
        sample(np.array([True, False, True, False]), region((5,)),
               note="row mask, broadcast value"),
        sample(np.array([[True, False] * 2 + [True]] * 4), 0.5, note="mask, number"),
        sample((slice(None), np.array([4, 1])), region((4, 2)), grad=(True, False),
               note="value needs no grad"),
        sample((slice(1, None), slice(None, 2)), region((3, 2)), grad=(False, True),
               note="input needs no grad"),
    ]


OPS = [
    OpInfo("getitem", getitem, _index_samples,
           torch=lambda torch, a, key: a[_torch_key(torch, key)]),
    OpInfo("setitem", _assigned, _setitem_samples, torch=_torch_assigned),
]


def _torch_key(torch, key):
    items = key if isinstance(key, tuple) else (key,)
    converted = tuple(torch.as_tensor(item) if isinstance(item, np.ndarray) else item for item in items)
    return converted if isinstance(key, tuple) else converted[0]
