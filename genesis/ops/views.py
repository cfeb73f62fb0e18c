"""Autograd for in-place updates made through a view.

When `v = base[...]` is changed in place, the op reads `v`'s region of `base`'s
current value (`region_of_base`: so `v`'s old grad_fn, and the hooks on it, are left
out, as PyTorch's CopySlices leaves them out), the change lands in `base`'s
storage, so `base` gets a new grad_fn (`CopySlices`: its old value outside the
view, the new value inside) and `v` becomes a view of the new `base`: its grad_fn
is an `AsStrided` (its region of the base, as PyTorch names it), or, while
`torch.autograd._force_original_view_tracking(True)` is in force (`view_replay`),
the node of its last view op, the recorded view ops being replayed on the base.
The view region is described by a flat index map: for each element of the view,
its position in `base`, found by replaying the view ops on an `arange`. Every
gradient here is linear, so higher-order gradients work.

Its registry entry, `mul_through_view`, writes a product through a view of a copy.
"""
from __future__ import annotations

from ..autograd.function import Op, move_retained_grad, register_view_rebuilder
from ..tensor import Tensor, wrap_array
from . import samples
from ._scatter import add_at
from .registry import OpInfo, Sample

__all__ = []  # the graph of in-place updates through views; no public function of its own

view_replay = [False]  # set by genesis.autograd.tracking_modes._force_original_view_tracking


def replay_view(array, device, steps):
    """Apply the recorded view ops `steps` to `array` (of the base's shape)."""
    for cls, args, kwargs in steps:
        ctx = cls._backward_cls()
        ctx.needs_input_grad = (False,) * (len(args) + 1)
        result = cls.forward(ctx, wrap_array(array, device), *args, **kwargs)
        array = result._data if isinstance(result, Tensor) else result
    return array


def flat_index_map(base: Tensor, steps):
    """For each element of the view, its flat position in `base`."""
    xp = base._device.xp
    positions = xp.arange(base._data.size).reshape(base.shape)
    return xp.ascontiguousarray(replay_view(positions, base._device, steps))


class TakeFlat(Op):
    """The view region of `a` (shape of the index map)."""

    @staticmethod
    def forward(ctx, a, index_map):
        ctx.shape, ctx.index_map = a.shape, index_map
        return a._data.reshape(-1)[index_map]

    @staticmethod
    def backward(ctx, grad):
        return PutFlat.apply(grad, ctx.shape, ctx.index_map), None


class PutFlat(Op):
    """Zeros of `shape` with `values` added at the view region."""

    @staticmethod
    def forward(ctx, values, shape, index_map):
        ctx.index_map = index_map
        xp = values._device.xp
        size = 1
        for extent in shape:
            size *= extent
        flat = xp.zeros(size, values._data.dtype)
        add_at(xp, flat, index_map.reshape(-1),
               xp.broadcast_to(values._data, index_map.shape).reshape(-1))
        return flat.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return TakeFlat.apply(grad, ctx.index_map), None, None


class ZeroFlat(Op):
    """`a` with its view region set to zero."""

    @staticmethod
    def forward(ctx, a, index_map):
        ctx.index_map = index_map
        out = a._data.copy()
        out.reshape(-1)[index_map.reshape(-1)] = 0
        return out

    @staticmethod
    def backward(ctx, grad):
        return ZeroFlat.apply(grad, ctx.index_map), None


class CopySlices(Op):
    """New grad_fn of a base whose view region was overwritten by `value` (already written)."""

    @staticmethod
    def forward(ctx, base, value, index_map):
        ctx.index_map = index_map
        return base._data

    @staticmethod
    def backward(ctx, grad):
        index_map = ctx.index_map
        grad_base = ZeroFlat.apply(grad, index_map) if ctx.needs_input_grad[0] else None
        grad_value = TakeFlat.apply(grad, index_map) if ctx.needs_input_grad[1] else None
        return grad_base, grad_value, None


class AsStrided(Op):
    """New grad_fn of a view after an in-place update: the view region of its base."""

    @staticmethod
    def forward(ctx, base, view_array, index_map):
        ctx.shape, ctx.index_map = base.shape, index_map
        return view_array

    @staticmethod
    def backward(ctx, grad):
        return PutFlat.apply(grad, ctx.shape, ctx.index_map), None, None


def region_of_base(view: Tensor) -> tuple:
    """What an in-place op on `view` reads instead of the view: its region of the base's
    current value (sharing the view's storage and version counter), so that the view's own
    grad_fn, and the hooks registered on it, are left out of the new graph, as PyTorch's
    CopySlices leaves them out. Returns (region, the view's flat index map)."""
    base, steps, _, _ = view._view
    index_map = flat_index_map(base, steps)
    region = _region_of(base, view, steps, index_map)
    region._version_counter = view._version_counter
    return region, index_map


def rebase_view(view: Tensor, value: Tensor, index_map=None) -> None:
    """After `value` was written into `view`'s storage, rewire the graph of base and view
    (`index_map`: the view's flat index map, when the caller has it)."""
    base, steps, creation, _ = view._view
    if index_map is None:
        index_map = flat_index_map(base, steps)
    copied = CopySlices.apply(base, value, index_map)
    _adopt_grad_fn(base, copied)
    _adopt_grad_fn(view, _region_of(base, view, steps, index_map))
    view._view = (base, steps, creation, view._version_counter[0])  # current again


def rebuild_view_grad_fn(view: Tensor) -> None:
    """A view whose storage changed through its base or another view: its grad_fn becomes
    its region of the base's current value."""
    base, steps, _, _ = view._view
    _adopt_grad_fn(view, _region_of(base, view, steps, flat_index_map(base, steps)))


def _region_of(base: Tensor, view: Tensor, steps, index_map) -> Tensor:
    """The view's region of the base's current value, as a tensor whose grad_fn the view
    takes: the view ops replayed on the base when view replay is on, else one AsStrided."""
    if view_replay[0]:
        region = base
        for cls, args, kwargs in steps:
            region = cls.apply(region, *args, **kwargs)
        return region
    return AsStrided.apply(base, view._data, index_map)


def _adopt_grad_fn(tensor: Tensor, source: Tensor) -> None:
    old = tensor.grad_fn
    tensor.grad_fn = source.grad_fn
    tensor._output_nr = source._output_nr
    tensor._requires_grad = source._requires_grad
    move_retained_grad(tensor, old)


register_view_rebuilder(rebuild_view_grad_fn, rebase_view)


METHODS = {}


def _multiplied_through_view(input: Tensor, other, key) -> tuple:
    """`input[key].mul_(other)` on a copy of `input` (a leaf that requires grad can't be
    written in place): the copy's new grad_fn is a CopySlices, the view's a ViewOf. Returns
    (copy, view)."""
    base = input.clone()
    view = base[key]
    view.mul_(other)
    return base, view


def _torch_multiplied_through_view(torch, input, other, key) -> tuple:
    base = input.clone()
    view = base[key]
    view.mul_(other)
    return base, view


def _through_view_samples(rng) -> list:
    def sample(shape, other, key, layout="contiguous", grad=None, note=""):
        return Sample((samples.values(rng, shape), other, key), layout=layout, grad=grad,
                      note=note or repr(key))

    return [
        sample((4, 5), samples.values(rng, (2, 3)), (slice(1, 3), slice(None, None, 2))),
        sample((4, 5), samples.values(rng, (5,)), 1, layout="transposed", note="row, transposed"),
        sample((3, 4, 4), samples.values(rng, (3, 1)), (Ellipsis, slice(1, None), 0),
               layout="strided", note="broadcast other, strided"),
        sample((4, 5), samples.values(rng, (4, 1, 3)), (slice(None), None, slice(1, 4)),
               note="None in the key"),
        sample((4, 5), 2.5, (slice(None, None, 2),), note="number"),
        sample((4, 5), samples.values(rng, (3, 5)), slice(1, None), grad=(True, False),
               note="other needs no grad"),
        sample((4, 5), samples.values(rng, (3, 5)), slice(None, 3), grad=(False, True),
               note="input needs no grad"),
    ]


OPS = [
    OpInfo("mul_through_view", _multiplied_through_view, _through_view_samples,
           torch=_torch_multiplied_through_view),
]
