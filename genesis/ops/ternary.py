"""Three-input arithmetic: lerp, addcmul, addcdiv (the updates optimizers are made of).

Each computes in the same order as PyTorch, so results agree to the last bit;
the in-place forms (`lerp_`, `addcmul_`, `addcdiv_`) have no-copy fast paths.
"""
from __future__ import annotations

import numbers

from ..autograd.function import Op
from ..device import devices_agree
from ..tensor import Tensor
from . import samples
from ._operands import array_of, cast_to, device_mismatch, result_type
from .inplace import apply_inplace
from .registry import OpInfo, Sample

__all__ = ["lerp", "addcmul", "addcdiv"]


class Lerp(Op):
    """start + weight * (end - start), written as PyTorch does for accuracy near weight 1."""

    @staticmethod
    def forward(ctx, start, end, weight):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(weight if needs[0] or needs[1] else None,
                              start if needs[2] else None, end if needs[2] else None)
        xp = start._device.xp
        a, b, w = start._data, end._data, array_of(weight)
        difference = b - a
        if isinstance(w, numbers.Number):
            return a + w * difference if abs(w) < 0.5 else b - difference * (1 - w)
        return xp.where(xp.abs(w) < 0.5, a + w * difference, b - difference * (1 - w))

    @staticmethod
    def backward(ctx, grad):
        weight, start, end = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return ((grad * (1 - weight) if needs[0] else None), (grad * weight if needs[1] else None),
                (grad * (end - start) if needs[2] else None))


class Addcmul(Op):
    """input + value * tensor1 * tensor2."""

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(tensor2 if needs[1] else None, tensor1 if needs[2] else None)
        ctx.value = value
        dtype = result_type(input, tensor1, tensor2)
        scale = dtype.type(value)
        return (cast_to(input, dtype) + scale * cast_to(tensor1, dtype) * cast_to(tensor2, dtype))

    @staticmethod
    def forward_inplace(target, tensor1, tensor2, value):
        xp = target._device.xp
        product = xp.multiply(tensor1._data, target._data.dtype.type(value))
        product *= tensor2._data
        xp.add(target._data, product, out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        tensor2, tensor1 = ctx.saved_tensors
        needs = ctx.needs_input_grad
        value = ctx.value
        return (grad if needs[0] else None, grad * tensor2 * value if needs[1] else None,
                grad * tensor1 * value if needs[2] else None, None)


class Addcdiv(Op):
    """input + value * tensor1 / tensor2."""

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(tensor1 if needs[2] else None,
                              tensor2 if needs[1] or needs[2] else None)
        ctx.value = value
        dtype = result_type(input, tensor1, tensor2)
        scale = dtype.type(value)
        return cast_to(input, dtype) + scale * cast_to(tensor1, dtype) / cast_to(tensor2, dtype)

    @staticmethod
    def forward_inplace(target, tensor1, tensor2, value):
        xp = target._device.xp
        quotient = xp.multiply(tensor1._data, target._data.dtype.type(value))
        quotient /= tensor2._data
        xp.add(target._data, quotient, out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        needs = ctx.needs_input_grad
        value = ctx.value
        return (grad if needs[0] else None, grad * value / tensor2 if needs[1] else None,
                -grad * value * tensor1 / (tensor2 * tensor2) if needs[2] else None, None)


def _check_lerp(op: str, start: Tensor, end: Tensor, weight) -> None:
    if not start.dtype.is_floating_point:
        raise RuntimeError(f"{op}: needs floating point tensors, got {start.dtype.name}; convert "
                           "first with .float()")
    if end.dtype is not start.dtype:
        raise RuntimeError(f"{op}: expected end of dtype {start.dtype.name} (like start), got "
                           f"{end.dtype.name}; convert it with .to(start.dtype)")
    tensors = (end, weight) if isinstance(weight, Tensor) else (end,)
    for tensor in tensors:
        if not devices_agree(tensor, start):
            raise RuntimeError(device_mismatch(op, start, tensor))
    if isinstance(weight, Tensor) and weight.dtype is not start.dtype and weight.ndim:
        raise RuntimeError(f"{op}: expected weight of dtype {start.dtype.name} (like start), got "
                           f"{weight.dtype.name}; convert it with .to(start.dtype)")


def _lerp_weight(start: Tensor, weight):
    """A 0-d weight tensor of another dtype is used in start's dtype, as PyTorch does."""
    if isinstance(weight, Tensor):
        return weight if weight.dtype is start.dtype else weight.to(start.dtype)
    if not isinstance(weight, numbers.Real):
        raise TypeError(f"lerp: weight must be a number or a Tensor, got {type(weight).__name__}")
    return float(weight)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """Linear interpolation input + weight * (end - input); weight is a number or a tensor.

    >>> import genesis
    >>> genesis.lerp(genesis.tensor([0., 10.]), genesis.tensor([10., 20.]), 0.25)
    tensor([ 2.5000, 12.5000])
    """
    _check_lerp("lerp", input, end, weight)
    return Lerp.apply(input, end, _lerp_weight(input, weight))


def _check_addc(op: str, input: Tensor, tensor1: Tensor, tensor2: Tensor, value) -> None:
    for tensor in (tensor1, tensor2):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{op}: tensor1 and tensor2 must be Tensors, got "
                            f"{type(tensor).__name__}")
        if not devices_agree(tensor, input):
            raise RuntimeError(device_mismatch(op, input, tensor))
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 * tensor2, broadcasting.

    >>> import genesis
    >>> t1, t2 = genesis.tensor([1., 2.]), genesis.tensor([3., 4.])
    >>> genesis.addcmul(genesis.ones(2), t1, t2, value=2)
    tensor([ 7., 17.])
    """
    _check_addc("addcmul", input, tensor1, tensor2, value)
    return Addcmul.apply(input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 / tensor2, broadcasting (tensor1 and tensor2 can't both be integers).

    >>> import genesis
    >>> t1, t2 = genesis.tensor([1., 2.]), genesis.tensor([4., 4.])
    >>> genesis.addcdiv(genesis.ones(2), t1, t2, value=2)
    tensor([1.5000, 2.0000])
    """
    _check_addc("addcdiv", input, tensor1, tensor2, value)
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("addcdiv: integer division of tensor1 by tensor2 is not supported "
                           "(as in PyTorch); convert one of them with .float()")
    return Addcdiv.apply(input, tensor1, tensor2, value)


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    """In place: self = lerp(self, end, weight)."""
    _check_lerp("lerp_", self, end, weight)
    return apply_inplace(Lerp, self, end, _lerp_weight(self, weight))


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In place: self += value * tensor1 * tensor2."""
    _check_addc("addcmul_", self, tensor1, tensor2, value)
    return apply_inplace(Addcmul, self, tensor1, tensor2, value)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In place: self += value * tensor1 / tensor2."""
    _check_addc("addcdiv_", self, tensor1, tensor2, value)
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("addcdiv_: integer division of tensor1 by tensor2 is not supported "
                           "(as in PyTorch); convert one of them with .float()")
    return apply_inplace(Addcdiv, self, tensor1, tensor2, value)


METHODS = {"lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv, "lerp_": lerp_,
           "addcmul_": addcmul_, "addcdiv_": addcdiv_}


def _lerp_samples(rng):
    values = samples.values
    return (samples.binary(values, values, rng, weight=0.3)
            + samples.binary(values, values, rng, weight=0.8)[:2]
            + [Sample((values(rng, (3, 4)), values(rng, (3, 4)), values(rng, (3, 4))),
                      note="tensor weight on both sides of 0.5"),
               Sample((values(rng, (3, 1)), values(rng, (4,)), values(rng, (2, 1, 1))),
                      note="all broadcast"),
               Sample((values(rng, (3, 4)), values(rng, (3, 4)), values(rng, (3, 4))),
                      grad=(False, False, True), note="weight only")])


def _addc_samples(rng, make_divisor):
    values = samples.values
    return [
        Sample((values(rng, (3, 4)), values(rng, (3, 4)), make_divisor(rng, (3, 4))),
               {"value": 0.5}, note="same shape"),
        Sample((values(rng, (3, 4)), values(rng, (4,)), make_divisor(rng, (3, 1))),
               {"value": -2}, note="broadcast"),
        Sample((values(rng, (4, 3)), values(rng, (4, 3)), make_divisor(rng, (4, 3))),
               layout="transposed", note="transposed, value 1"),
        Sample((values(rng, (3, 4)), values(rng, (3, 4)), make_divisor(rng, (3, 4))),
               grad=(True, False, True), note="tensor1 needs no grad"),
    ]


OPS = [
    OpInfo("lerp", lerp, _lerp_samples, torch=lambda torch, a, b, weight: torch.lerp(a, b, weight)),
    OpInfo("addcmul", addcmul, lambda rng: _addc_samples(rng, samples.values),
           torch=lambda torch, a, b, c, **kw: torch.addcmul(a, b, c, **kw)),
    OpInfo("addcdiv", addcdiv, lambda rng: _addc_samples(rng, samples.positive),
           torch=lambda torch, a, b, c, **kw: torch.addcdiv(a, b, c, **kw)),
]
