"""Logical and bitwise ops: `logical_*` on any dtype (bool result), `bitwise_*` and the
operators `&`, `|`, `^`, `~`, `<<`, `>>` on bool and integer tensors. No gradients.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from . import samples
from ._operands import kind_of, operands, reflected
from .inplace import apply_inplace
from .registry import OpInfo, Sample

__all__ = ["logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift"]


def _logical(name: str, ufunc: str, doc: str):
    def forward(ctx, a, b):
        x, y = operands(a, b, name)
        xp = (a if isinstance(a, Tensor) else b)._device.xp
        return getattr(xp, ufunc)(x, y)

    cls = type("".join(part.capitalize() for part in name.split("_")), (Op,),
               {"forward": staticmethod(forward), "__module__": __name__, "__doc__": doc})
    return cls


def _bitwise(name: str, ufunc: str, doc: str):
    def forward(ctx, a, b):
        x, y = _integer_operands(name, a, b)
        xp = (a if isinstance(a, Tensor) else b)._device.xp
        return getattr(xp, ufunc)(x, y)

    def forward_inplace(target, other):
        _, y = _integer_operands(name, target, other)
        getattr(target._device.xp, ufunc)(target._data, y, out=target._data, casting="same_kind")

    cls = type("".join(part.capitalize() for part in name.split("_")), (Op,),
               {"forward": staticmethod(forward), "forward_inplace": staticmethod(forward_inplace),
                "__module__": __name__, "__doc__": doc})
    return cls


def _integer_operands(name: str, a, b):
    x, y = operands(a, b, name)
    if kind_of(x) not in "iub" or kind_of(y) not in "iub":
        raise RuntimeError(f"{name}: only bool and integer tensors are supported, got "
                           f"{_dtype_names(a, b)}; for masks compare first (x > 0)")
    return x, y


def _dtype_names(*values) -> str:
    return " and ".join(value.dtype.name if isinstance(value, Tensor) else type(value).__name__
                        for value in values)


LogicalAnd = _logical("logical_and", "logical_and", "Both nonzero (bool result).")
LogicalOr = _logical("logical_or", "logical_or", "Either nonzero (bool result).")
LogicalXor = _logical("logical_xor", "logical_xor", "Exactly one nonzero (bool result).")
BitwiseAnd = _bitwise("bitwise_and", "bitwise_and", "Bitwise AND (logical AND for bools).")
BitwiseOr = _bitwise("bitwise_or", "bitwise_or", "Bitwise OR (logical OR for bools).")
BitwiseXor = _bitwise("bitwise_xor", "bitwise_xor", "Bitwise XOR (logical XOR for bools).")


def _shifted(name: str, left: bool):
    """A shift with PyTorch's answers where C leaves them undefined: shifting by a negative
    amount or by the width of the type or more gives 0 (left) or the sign (right)."""
    def shift(xp, x, y):
        x, y = xp.asarray(x), xp.asarray(y)
        if x.dtype == np.bool_:  # bools shift as the integers they hold
            x = x.astype(np.int64)
        width = x.dtype.itemsize * 8
        out_of_range = (y < 0) | (y >= width)
        amount = xp.where(out_of_range, 0, y).astype(x.dtype)
        if left:
            return xp.where(out_of_range, xp.zeros_like(x), xp.left_shift(x, amount))
        return xp.where(out_of_range, xp.right_shift(x, width - 1), xp.right_shift(x, amount))

    def forward(ctx, a, b):
        x, y = _integer_operands(name, a, b)
        return shift((a if isinstance(a, Tensor) else b)._device.xp, x, y)

    def forward_inplace(target, other):
        _, y = _integer_operands(name, target, other)
        target._data[...] = shift(target._device.xp, target._data, y)

    cls = type("".join(part.capitalize() for part in name.split("_")), (Op,),
               {"forward": staticmethod(forward), "forward_inplace": staticmethod(forward_inplace),
                "__module__": __name__,
                "__doc__": f"Bitwise {'left' if left else 'right'} shift of integers."})
    return cls


BitwiseLeftShift = _shifted("bitwise_left_shift", left=True)
BitwiseRightShift = _shifted("bitwise_right_shift", left=False)


class LogicalNot(Op):
    """True where the value is zero."""

    @staticmethod
    def forward(ctx, a):
        return a._device.xp.logical_not(a._data)


class BitwiseNot(Op):
    """Bitwise NOT (logical NOT for bools): ~x == -x - 1 for integers."""

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind not in "iub":
            raise RuntimeError(f"bitwise_not (~): only bool and integer tensors are supported, got "
                               f"{a.dtype.name}; to invert a mask of floats use logical_not()")
        return a._device.xp.invert(a._data)


def logical_and(input, other) -> Tensor:
    """Elementwise `input and other` on truth values (nonzero is True).

    >>> import genesis
    >>> genesis.logical_and(genesis.tensor([1., 0., 2.]), genesis.tensor([True, True, False]))
    tensor([ True, False, False])
    """
    return LogicalAnd.apply(input, other)


def logical_or(input, other) -> Tensor:
    """Elementwise `input or other` on truth values (nonzero is True).

    >>> import genesis
    >>> genesis.logical_or(genesis.tensor([1., 0., 0.]), genesis.tensor([0, 0, 3]))
    tensor([ True, False,  True])
    """
    return LogicalOr.apply(input, other)


def logical_xor(input, other) -> Tensor:
    """Elementwise exclusive or on truth values (nonzero is True).

    >>> import genesis
    >>> genesis.logical_xor(genesis.tensor([1, 0, 1]), genesis.tensor([1, 1, 0]))
    tensor([False,  True,  True])
    """
    return LogicalXor.apply(input, other)


def logical_not(input: Tensor) -> Tensor:
    """Elementwise `not input` (True where the value is zero).

    >>> import genesis
    >>> genesis.logical_not(genesis.tensor([0., 2.]))
    tensor([ True, False])
    """
    return LogicalNot.apply(input)


def bitwise_and(input, other) -> Tensor:
    """input & other for bool and integer tensors.

    >>> import genesis
    >>> genesis.tensor([True, True]) & genesis.tensor([True, False]), genesis.tensor([6]) & 3
    (tensor([ True, False]), tensor([2]))
    """
    return BitwiseAnd.apply(input, other)


def bitwise_or(input, other) -> Tensor:
    """input | other for bool and integer tensors.

    >>> import genesis
    >>> genesis.tensor([False, True]) | genesis.tensor([False, False]), genesis.tensor([4]) | 1
    (tensor([False,  True]), tensor([5]))
    """
    return BitwiseOr.apply(input, other)


def bitwise_xor(input, other) -> Tensor:
    """input ^ other for bool and integer tensors.

    >>> import genesis
    >>> genesis.tensor([True, True]) ^ genesis.tensor([True, False]), genesis.tensor([6]) ^ 3
    (tensor([False,  True]), tensor([5]))
    """
    return BitwiseXor.apply(input, other)


def bitwise_not(input: Tensor) -> Tensor:
    """~input: logical NOT for bools, bitwise NOT for integers.

    >>> import genesis
    >>> ~genesis.tensor([True, False]), ~genesis.tensor([0, 5])
    (tensor([False,  True]), tensor([-1, -6]))
    """
    return BitwiseNot.apply(input)


def bitwise_left_shift(input, other) -> Tensor:
    """input << other for integer tensors (and bools, as integers).

    >>> import genesis
    >>> genesis.tensor([1, -3]) << 2, 1 << genesis.tensor([3])
    (tensor([  4, -12]), tensor([8]))
    """
    return BitwiseLeftShift.apply(input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """input >> other for integer tensors (arithmetic: negative values stay negative).

    >>> import genesis
    >>> genesis.tensor([8, -5]) >> 1
    tensor([ 4, -3])
    """
    return BitwiseRightShift.apply(input, other)


def _inplace(cls, name: str):
    def method(self: Tensor, other) -> Tensor:
        return apply_inplace(cls, self, other)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: self = {name}(self, other)."
    return method


bitwise_and_ = _inplace(BitwiseAnd, "bitwise_and")
bitwise_or_ = _inplace(BitwiseOr, "bitwise_or")
bitwise_xor_ = _inplace(BitwiseXor, "bitwise_xor")
bitwise_left_shift_ = _inplace(BitwiseLeftShift, "bitwise_left_shift")
bitwise_right_shift_ = _inplace(BitwiseRightShift, "bitwise_right_shift")


def bitwise_not_(self: Tensor) -> Tensor:
    """In place: self = ~self."""
    return apply_inplace(BitwiseNot, self)


METHODS = {
    "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "logical_not": logical_not, "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not, "bitwise_and_": bitwise_and_,
    "bitwise_or_": bitwise_or_, "bitwise_xor_": bitwise_xor_,
    "__and__": bitwise_and, "__rand__": reflected(bitwise_and), "__iand__": bitwise_and_,
    "__or__": bitwise_or, "__ror__": reflected(bitwise_or), "__ior__": bitwise_or_,
    "__xor__": bitwise_xor, "__rxor__": reflected(bitwise_xor), "__ixor__": bitwise_xor_,
    "__invert__": bitwise_not, "bitwise_not_": bitwise_not_,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "bitwise_left_shift_": bitwise_left_shift_, "bitwise_right_shift_": bitwise_right_shift_,
    "__lshift__": bitwise_left_shift, "__rlshift__": reflected(bitwise_left_shift),
    "__ilshift__": bitwise_left_shift_, "__rshift__": bitwise_right_shift,
    "__rrshift__": reflected(bitwise_right_shift), "__irshift__": bitwise_right_shift_,
}


def _truth_samples(rng):
    def mixed(r, shape):
        return r.choice((0.0, 0.0, 1.5, -2.0), size=shape)

    return (samples.binary(mixed, mixed, rng)[:3]
            + [Sample((rng.integers(-1, 2, size=(3, 4)), rng.random((3, 4)) < 0.5),
                      note="int64 and bool"),
               Sample((rng.random((3, 4)) < 0.5, True), note="bool and True")])


def _bit_samples(rng):
    def integers(r, shape):
        return r.integers(-8, 8, size=shape)

    def masks(r, shape):
        return r.random(shape) < 0.5

    return [Sample((integers(rng, (3, 4)), integers(rng, (4,))), note="int64, broadcast"),
            Sample((masks(rng, (3, 4)), masks(rng, (3, 4))), note="bool"),
            Sample((integers(rng, (3, 4)), masks(rng, (3, 4))), note="int64 and bool"),
            Sample((integers(rng, (4, 3)), 5), layout="transposed", note="int64 and 5"),
            Sample((masks(rng, (3, 4)), False), note="bool and False")]


def _shift_samples(rng):
    def values(r, shape):
        return r.integers(-100, 100, size=shape)

    def amounts(r, shape):
        return r.integers(0, 10, size=shape)

    return [Sample((values(rng, (3, 4)), amounts(rng, (4,))), note="int64, broadcast"),
            Sample((values(rng, (4, 3)), 3), layout="transposed", note="int64 and 3"),
            Sample((values(rng, (3,)), np.array([-1, 64, 70])), note="out-of-range amounts"),
            Sample((rng.random((3, 4)) < 0.5, amounts(rng, (3, 4))), note="bool and int64")]


def _unary_samples(rng):
    return [Sample((rng.integers(-8, 8, size=(3, 4)),), note="int64"),
            Sample((rng.random((3, 4)) < 0.5,), note="bool"),
            Sample((np.zeros((0, 3), dtype=np.int64),), note="zero-size")]


OPS = [OpInfo(name, globals()[name], _truth_samples, differentiable=False,
              torch=lambda torch, a, b, name=name: getattr(torch, name)(a, torch.as_tensor(b)))
       for name in ("logical_and", "logical_or", "logical_xor")] + [
    OpInfo(name, globals()[name], _bit_samples, differentiable=False,
           torch=lambda torch, a, b, name=name: getattr(torch, name)(a, b))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor")] + [
    OpInfo("logical_not", logical_not, lambda rng: _unary_samples(rng) + [
        Sample((rng.choice((0.0, 1.5), size=(3, 4)),), note="float64")], differentiable=False,
        torch=lambda torch, a: torch.logical_not(a)),
    OpInfo("bitwise_not", bitwise_not, _unary_samples, differentiable=False,
           torch=lambda torch, a: torch.bitwise_not(a)),
] + [OpInfo(name, globals()[name], _shift_samples, differentiable=False,
            torch=lambda torch, a, b, name=name: getattr(torch, name)(a, b))
     for name in ("bitwise_left_shift", "bitwise_right_shift")]
