"""Boolean-mask ops: masked_fill, masked_select, nonzero."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from .index import GetItem
from .inplace import apply_inplace
from .registry import OpInfo, Sample

__all__ = ["masked_fill", "masked_select", "nonzero", "argwhere"]


class MaskedFill(Op):
    """`a` with `value` where the (broadcast) mask is True."""

    @staticmethod
    def forward(ctx, a, value, mask):
        ctx.mask = mask
        return a._device.xp.where(mask, _fill_value(a, value), a._data)

    @staticmethod
    def forward_inplace(target, value, mask):
        target._device.xp.copyto(target._data, _fill_value(target, value), where=mask)

    @staticmethod
    def backward(ctx, grad):
        mask = ctx.mask
        needs = ctx.needs_input_grad
        grad_a = MaskedFill.apply(grad, 0, mask) if needs[0] else None
        grad_value = (grad * wrap_array(mask, grad._device)).sum() if needs[1] else None
        return grad_a, grad_value, None


def _fill_value(a: Tensor, value):
    """The value in `a`'s dtype (PyTorch casts it to the tensor's dtype)."""
    if isinstance(value, Tensor):
        return value._data.astype(a._data.dtype, copy=False)
    return a._data.dtype.type(value)


class MaskedSelect(GetItem):
    """The elements where the mask is True, as a 1-D copy."""

    is_view = False


def _mask_array(op: str, input: Tensor, mask) -> object:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}: mask must be a bool Tensor, got {type(mask).__name__}")
    if mask._data.dtype.kind != "b":
        raise RuntimeError(f"{op}: mask must be a bool tensor, got {mask.dtype!r}; build it with a "
                           "comparison (x > 0) or convert with .bool()")
    if mask._device != input._device:
        raise RuntimeError(f"{op}: mask is on {mask._device}, the input on {input._device}")
    return mask._data


def _broadcast_shape(op: str, input: Tensor, mask) -> tuple:
    try:
        return np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"{op}: the mask of shape {tuple(mask.shape)} can't be broadcast to the "
                           f"input's shape {tuple(input.shape)}") from None


def _checked_value(op: str, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"{op}: the value must be a number or a 0-d tensor, got a tensor of "
                           f"shape {tuple(value.shape)}")
    return value


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """A copy of `input` with `value` (a number or 0-d tensor) where `mask` is True; the mask
    broadcasts. A 0-d tensor value gets the sum of the gradient at the filled places.

    >>> import genesis
    >>> x = genesis.tensor([[1., 2.], [3., 4.]])
    >>> x.masked_fill(x > 2, 0.)
    tensor([[1., 2.],
            [0., 0.]])
    """
    mask_array = _mask_array("masked_fill", input, mask)
    _broadcast_shape("masked_fill", input, mask_array)
    return MaskedFill.apply(input, _checked_value("masked_fill", value), mask_array)


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    """In-place `masked_fill`; the mask must broadcast to self's shape."""
    mask_array = _mask_array("masked_fill_", self, mask)
    if _broadcast_shape("masked_fill_", self, mask_array) != self.shape:
        raise RuntimeError(f"masked_fill_: the mask of shape {tuple(mask.shape)} would grow the "
                           f"tensor of shape {tuple(self.shape)}; use out-of-place masked_fill")
    return apply_inplace(MaskedFill, self, _checked_value("masked_fill_", value), mask_array)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of `input` where `mask` is True (both broadcast), as a 1-D tensor.

    >>> import genesis
    >>> x = genesis.tensor([[1., 2.], [3., 4.]])
    >>> x.masked_select(x > 1.5)
    tensor([2., 3., 4.])
    """
    mask_array = _mask_array("masked_select", input, mask)
    shape = _broadcast_shape("masked_select", input, mask_array)
    if input.shape != shape:
        input = input.expand(shape)
    if mask_array.shape != shape:
        mask_array = input._device.xp.broadcast_to(mask_array, shape)
    return MaskedSelect.apply(input, (mask_array,))


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or with `as_tuple` one
    1-D tensor per dim (usable as an index). Not differentiable.

    >>> import genesis
    >>> genesis.tensor([[0, 3], [5, 0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    """
    xp, device = input._device.xp, input._device
    array = input._data
    if as_tuple:
        if array.ndim == 0:
            array = array.reshape(1)
        return tuple(wrap_array(index.astype("int64", copy=False), device)
                     for index in xp.nonzero(array))
    return wrap_array(xp.argwhere(array).astype("int64", copy=False), device)


def argwhere(input: Tensor) -> Tensor:
    """Same as `nonzero(input)`: an (n, ndim) tensor of the nonzero elements' indices."""
    return nonzero(input)


METHODS = {"masked_fill": masked_fill, "masked_fill_": masked_fill_,
           "masked_select": masked_select, "nonzero": nonzero, "argwhere": argwhere}


def _masked_samples(rng, with_value: bool):
    def sample(shape, mask_shape, *value, layout="contiguous", grad=None):
        mask = np.asarray(rng.uniform(size=mask_shape) < 0.5)
        return Sample((samples.values(rng, shape), mask) + value, grad=grad, layout=layout,
                      note=f"{shape} mask {mask_shape} {layout}")

    if with_value:
        return [sample((3, 4), (3, 4), 1.5), sample((3, 4), (4,), -2.0),
                sample((3, 1), (2, 3, 4), 0.0), sample((3, 4), (3, 4), samples.values(rng, ())),
                sample((3, 4), (3, 4), samples.values(rng, ()), grad=(False, False, True)),
                sample((4, 3), (4, 3), 3.0, layout="transposed"), sample((), (), 1.0)]
    return [sample((3, 4), (3, 4)), sample((3, 4), (4,)), sample((3, 1), (2, 3, 4)),
            sample((4, 3), (4, 3), layout="transposed"), sample((), ())]


def _nonzero_samples(rng):
    def sample(shape, **kwargs):
        values = np.asarray(rng.integers(0, 2, size=shape) * samples.values(rng, shape))
        return Sample((values,), kwargs, note=f"{shape} {kwargs}")

    return [sample((3, 4)), sample((2, 3, 2)), sample((5,)), sample((3, 4), as_tuple=True),
            sample(()), sample((), as_tuple=True), sample((0, 3))]


OPS = [
    OpInfo("masked_fill", masked_fill, lambda rng: _masked_samples(rng, True),
           torch=lambda torch, a, mask, value: torch.masked_fill(a, mask, value)),
    OpInfo("masked_select", masked_select, lambda rng: _masked_samples(rng, False),
           torch=lambda torch, a, mask: torch.masked_select(a, mask)),
    OpInfo("nonzero", nonzero, _nonzero_samples, differentiable=False,
           torch=lambda torch, a, **kw: torch.nonzero(a, **kw)),
]
