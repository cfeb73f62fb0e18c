"""The product of values scattered into ones (`ScatterProduct`), the rule behind
`scatter_reduce(..., "prod")`, `index_reduce(..., "prod")` and `scatter(..., reduce="multiply")`,
and `applied_at`, a ufunc applied at indexed places with repeats combined in turn."""
from __future__ import annotations

import numpy as np

from ..autograd.function import DelayedError, Op
from ..autograd.grad_mode import grad_state
from ..device import cpu, transfer
from ..tensor import wrap_array
from ._scatter import add_at
from .index import GetItem
from .where import where

__all__ = []


class ScatterProduct(Op):
    """Ones of `shape` multiplied at `key` by `src` (repeats multiply together); the gradient
    of each factor is the product of the others at its place, exact at zeros."""

    @staticmethod
    def forward(ctx, src, key, shape):
        ctx.save_for_backward(src)
        ctx.key, ctx.shape = key, shape
        return multiplied(src._device, shape, key, src._data)

    @staticmethod
    def backward(ctx, grad):
        (src,) = ctx.saved_tensors
        xp, key = src._device.xp, ctx.key
        zero = src._data == 0
        zeros_here = xp.zeros(ctx.shape, np.int64)
        add_at(xp, zeros_here, key, zero.astype(np.int64))
        lone_zero = wrap_array(zero & (zeros_here[key] == 1), src._device)
        safe = where(wrap_array(zero, src._device), 1.0, src)
        whole = GetItem.apply(ScatterProduct.apply(src, key, ctx.shape), key) / safe
        without_zero = GetItem.apply(ScatterProduct.apply(safe, key, ctx.shape), key)
        others = where(lone_zero, without_zero, where(wrap_array(zero, src._device), 0.0, whole))
        gradient = GetItem.apply(grad, key) * others
        if grad_state.enabled and bool((zeros_here > 1).any()):
            # exact, but constant where zeros meet: its own derivative would be wrong there
            gradient = DelayedError.apply(gradient, message=_MEETING_ZEROS)
        return gradient, None, None


_MEETING_ZEROS = ("scatter_reduce/index_reduce: Double backward is unsupported for src when >1 zeros "
                  "in src are scattered to the same position in self (reduce='prod'): the first "
                  "derivative there is exact, but genesis does not compute its derivative; move the "
                  "zeros apart or differentiate once")


def multiplied(device, shape, key, values):
    """Ones of `shape` with `values` multiplied in at `key`, repeats included."""
    return applied_at(device, np.multiply, device.xp.ones(shape, values.dtype), key, values)


def applied_at(device, ufunc, out, key, values):
    """`ufunc.at(out, key, values)` (repeated places combined in turn), returning `out`.
    On a GPU this one step runs on the host: CuPy has no `multiply.at`, and its
    `maximum.at`/`minimum.at` round float64 values through float32."""
    if device.xp is np:
        ufunc.at(out, key, values)
        return out
    host = transfer(out, device, cpu)
    ufunc.at(host, tuple(transfer(item, device, cpu) if getattr(item, "ndim", 0) else item
                         for item in key), transfer(values, device, cpu))
    return transfer(host, cpu, device)
