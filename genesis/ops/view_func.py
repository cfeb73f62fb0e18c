"""Replaying a view's chain of view ops on another base (`Tensor._view_func`), and
`slice_inverse`, the view op that undoes a slice.

A view remembers the view ops that made it from its base (`Tensor._view`: each step is the
op class and its arguments). `view._view_func(new_base)` applies the same steps to
`new_base`, giving the view of `new_base` that `view` is of its own base. The arguments of
a step can be changed on the way, as PyTorch's `symint_visitor_fn` and `tensor_visitor_fn`
change them: the first is given each size, index and offset among them (PyTorch's SymInts;
a dimension number is not one), the second each tensor.

>>> import genesis
>>> base = genesis.arange(12.).reshape(3, 4).clone()
>>> view = base.select(1, 2)
>>> view._view_func(base * 10)
tensor([ 20.,  60., 100.])
>>> view._view_func(base, symint_visitor_fn=lambda index: index + 1)
tensor([ 3.,  7., 11.])
"""
from __future__ import annotations

from ..tensor import Tensor
from . import samples
from .broadcast import Expand
from .index import GetItem
from .registry import OpInfo, Sample
from .shape import Reshape
from .storage import StorageWindow
from .tensor_attributes import storage_offset

__all__ = ["slice_inverse"]


class SliceInverse(StorageWindow):
    """The window on the storage of `a` that `src` is on its own (same shape, strides and
    storage offset): the base a slice `a` was cut from, when `src` has that base's layout."""

    is_view = True

    @staticmethod
    def forward(ctx, a, src, dim, start, end, step):
        strides = tuple(step // src._data.itemsize for step in src._data.strides)
        return StorageWindow.forward(ctx, a, src.shape, strides, storage_offset(src))

    @staticmethod
    def backward(ctx, grad):
        return StorageWindow.backward(ctx, grad)[:1] + (None,) * 5


class AsStridedView(StorageWindow):
    """`as_strided`: the window (`size`, `stride`, `storage_offset`, in elements) on the
    storage of `a`, a view of `a`."""

    is_view = True


def strided_view(input: Tensor, size: tuple, stride: tuple, storage_offset: int) -> Tensor:
    """The view `input.as_strided(size, stride, storage_offset)` (checked by the caller)."""
    return _marked_view(input, AsStridedView, (size, stride, storage_offset))


def _marked_view(input: Tensor, cls, args: tuple) -> Tensor:
    """`cls.apply(input, *args)`, a window on `input`'s storage, recorded as a view of it:
    NumPy does not link a strided window to the array it views, so `Function.apply` can't
    tell that it is one."""
    window = cls.apply(input, *args)
    if window._view is None and input._version_counter.__class__ is list:
        version = input._version_counter[0]
        window._version_counter = input._version_counter
        base, steps, creation = input._view[:3] if input._view is not None else (input, (), None)
        window._view = (base, steps + ((cls, args, {}),), creation, version)
    return window


def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """The inverse of slicing: `input` being `base[..., start:end:step, ...]` (along `dim`),
    a view of `input`'s storage laid out as `src` (which has `base`'s shape, strides and
    storage offset), so that it reads `base`'s elements. `dim`, `start`, `end` and `step`
    describe the slice; the layout is `src`'s (as in PyTorch).

    >>> import genesis
    >>> base = genesis.arange(6.).reshape(2, 3)
    >>> piece = base[:, 1:2].detach()
    >>> genesis.slice_inverse(piece, base, 1, 1, 2, 1)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"slice_inverse: src must be a Tensor (the base the slice was cut "
                        f"from), got {type(src).__name__}")
    return _marked_view(input, SliceInverse, (src, dim, start, end, step))


def _visit_key(key, visit):
    """A GetItem key with each integer in it (an index, a slice's bounds and step: 1 where
    none is given, as PyTorch's slice has) passed to `visit`; `slice(None)` keeps a dim."""
    if key.__class__ is tuple:
        return tuple(_visit_key(part, visit) for part in key)
    if key.__class__ is slice:
        if key == slice(None):
            return key
        step = 1 if key.step is None else key.step
        return slice(*(None if bound is None else visit(bound)
                       for bound in (key.start, key.stop, step)))
    if key.__class__ is int:
        return visit(key)
    return key


def _visit_all(values, visit) -> tuple:
    return tuple(visit(value) for value in values)


# Per view op: its arguments after the input with each size, index and offset passed to
# `visit`. An op not listed has none (transpose, permute, diagonal: dimension numbers only).
_SIZES_OF = {
    GetItem: lambda args, visit: (_visit_key(args[0], visit),) + args[1:],
    Reshape: lambda args, visit: (_visit_all(args[0], visit),),
    Expand: lambda args, visit: (_visit_all(args[0], visit),),
    SliceInverse: lambda args, visit: (args[0], args[1]) + _visit_all(
        args[2:], lambda bound: None if bound is None else visit(bound)),
    StorageWindow: lambda args, visit: (_visit_all(args[0], visit), _visit_all(args[1], visit),
                                        visit(args[2])),
}


def _visited(cls, args: tuple, symint_visitor_fn, tensor_visitor_fn) -> tuple:
    if symint_visitor_fn is not None:
        for klass in cls.__mro__:
            if klass in _SIZES_OF:
                args = _SIZES_OF[klass](args, symint_visitor_fn)
                break
    if tensor_visitor_fn is not None:
        args = tuple(tensor_visitor_fn(arg) if isinstance(arg, Tensor) else arg for arg in args)
    return args


def _view_func(self: Tensor, new_base: Tensor, symint_visitor_fn=None,
               tensor_visitor_fn=None) -> Tensor:
    """This view's view ops replayed on `new_base` (recorded, so differentiable): the view of
    `new_base` that this tensor is of its base. `symint_visitor_fn(n)` may change each size,
    index and offset of the ops, `tensor_visitor_fn(t)` each tensor argument, for this
    replay only."""
    if self._view is None:
        raise RuntimeError("_view_func: this tensor is not a view, so it has no view ops to "
                           "replay; use it on a tensor made by a view op (t._is_view())")
    if not isinstance(new_base, Tensor):
        raise TypeError(f"_view_func: new_base must be a Tensor, got {type(new_base).__name__}")
    result = new_base
    for cls, args, kwargs in self._view[1]:
        result = cls.apply(result, *_visited(cls, args, symint_visitor_fn, tensor_visitor_fn),
                           **kwargs)
    return result


METHODS = {"_view_func": _view_func, "_view_func_unsafe": _view_func}


def _inverted_slice(values: Tensor, dim: int, start: int, end: int, step: int) -> Tensor:
    """`slice_inverse` of a slice of a tensor that depends on `values` only in that slice
    (zeros elsewhere), so its gradient is exactly the slice's."""
    base = values.new_zeros(values.shape).slice_scatter(
        values[(slice(None),) * dim + (slice(start, end, step),)], dim, start, end, step)
    piece = base[(slice(None),) * dim + (slice(start, end, step),)]
    return slice_inverse(piece, base, dim, start, end, step)


def _torch_inverted_slice(torch, values, dim, start, end, step):
    base = values.new_zeros(values.shape).slice_scatter(
        values[(slice(None),) * dim + (slice(start, end, step),)], dim, start, end, step)
    piece = base[(slice(None),) * dim + (slice(start, end, step),)]
    return torch.slice_inverse(piece, base, dim, start, end, step)


OPS = [
    OpInfo("slice_inverse", _inverted_slice, lambda rng: [
        Sample((samples.values(rng, (3, 4, 5)), 1, 2, 3, 1), note="one row of dim 1"),
        Sample((samples.values(rng, (6, 4)), 0, 1, 6, 2), note="every other row"),
        Sample((samples.values(rng, (4, 5)), 1, 0, 5, 1), layout="transposed",
               note="the whole dim, transposed")],
        torch=_torch_inverted_slice),
]
