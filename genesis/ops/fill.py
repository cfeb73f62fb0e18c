"""Whole-tensor overwrites: `fill_`, `zero_`, `copy_`."""
from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Op
from ..device import transfer
from ..dtypes import check_fits
from ..sizes import describe_value
from ..tensor import Tensor
from . import samples
from ._operands import zeros_of
from .inplace import apply_inplace
from .registry import OpInfo, Sample

__all__ = []


class Fill(Op):
    """A tensor like `a` filled with `value` (a number or a one-element tensor)."""

    writes_one_value = True

    @staticmethod
    def forward(ctx, a, value):
        xp = a._device.xp
        ctx.value_shape = value.shape if isinstance(value, Tensor) else ()
        fill = value._data.reshape(()) if isinstance(value, Tensor) else value
        return xp.full(a.shape, fill, a._data.dtype)

    @staticmethod
    def forward_inplace(target, value):
        target._data[...] = value._data.reshape(()) if isinstance(value, Tensor) else value

    @staticmethod
    def backward(ctx, grad):
        # The overwritten tensor stays in the graph with a zero gradient (PyTorch's
        # FillBackward0/ZeroBackward0), so a leaf behind it gets zeros, not None.
        needs = ctx.needs_input_grad
        return (zeros_of(grad) if needs[0] else None,
                grad.sum().reshape(ctx.value_shape) if needs[1] else None)


class Copy(Op):
    """`src` broadcast to `a`'s shape, cast to its dtype and moved to its device."""

    mixes_devices = True
    node_class_name = "CopyBackwards"  # PyTorch's

    @staticmethod
    def forward(ctx, a, src):
        ctx.src_device = src._device
        array = transfer(src._data, src._device, a._device)
        xp = a._device.xp
        return xp.broadcast_to(array, a.shape).astype(a._data.dtype, copy=False)

    @staticmethod
    def forward_inplace(target, src):
        array = transfer(src._data, src._device, target._device)
        target._device.xp.copyto(target._data, array, casting="unsafe")

    @staticmethod
    def backward(ctx, grad):
        grad_target = zeros_of(grad) if ctx.needs_input_grad[0] else None  # overwritten: 0
        if ctx.src_device != grad.device:
            grad = grad.to(ctx.src_device)
        return grad_target, grad


def fill_(self: Tensor, value) -> Tensor:
    """Set every element to `value` (a number, or a one-element tensor).

    >>> import genesis
    >>> genesis.zeros(2, dtype=genesis.uint8).fill_(300)
    Traceback (most recent call last):
    ...
    genesis.dtypes.DTypeOverflowError: fill_: the value 300 does not fit genesis.uint8 (range [0, 255])
    """
    if isinstance(value, Tensor):
        if value._data.size != 1:
            raise RuntimeError(f"fill_: the value must be a number or a one-element tensor, got "
                               f"a tensor of shape {tuple(value.shape)}")
    elif isinstance(value, numbers.Number | np.bool_):
        check_fits(value, self.dtype, "fill_")
    else:
        raise TypeError(f"fill_: the value must be a number or a one-element tensor, got "
                        f"{describe_value(value)}")
    return apply_inplace(Fill, self, value)


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero."""
    return apply_inplace(Fill, self, 0)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy `src` (broadcast, cast, moved as needed) into self.

    >>> import genesis
    >>> w = genesis.zeros(2, requires_grad=True)
    >>> with genesis.no_grad():
    ...     _ = w.copy_(genesis.tensor([1., 2.]))
    >>> w
    tensor([1., 2.], requires_grad=True)
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    return apply_inplace(Copy, self, src)


METHODS = {"fill_": fill_, "zero_": zero_, "copy_": copy_}


def _filled(a: Tensor, value) -> Tensor:
    """`fill_` on a copy of `a` (a leaf that requires grad can't be written in place)."""
    return a.clone().fill_(value)


def _copied(a: Tensor, src: Tensor) -> Tensor:
    """`copy_` of `src` into a copy of `a`."""
    return a.clone().copy_(src)


OPS = [
    OpInfo("fill_", _filled, lambda rng: [
        Sample((samples.values(rng, (3, 4)), samples.values(rng, ())), note="tensor value"),
        Sample((samples.values(rng, (3, 4)), 1.5), layout="transposed", note="number"),
        Sample((samples.values(rng, (2, 3)), samples.values(rng, ())), layout="strided",
               note="strided")],
        torch=lambda torch, a, value: a.clone().fill_(value)),
    OpInfo("copy_", _copied, lambda rng: [
        Sample((samples.values(rng, (3, 4)), samples.values(rng, (3, 4))), note="same shape"),
        Sample((samples.values(rng, (3, 4)), samples.values(rng, (4,))), note="broadcast src"),
        Sample((samples.values(rng, (4, 3)), samples.values(rng, (4, 3))), layout="transposed",
               note="transposed")],
        torch=lambda torch, a, src: a.clone().copy_(src)),
]

