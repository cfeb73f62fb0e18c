"""Comparisons and predicates: bool results, no gradient.

Operands are promoted as for arithmetic (an int tensor compared with 2.5 is
compared as float), broadcasting. `allclose` and `equal` answer with a Python bool.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dims, operands
from .registry import OpInfo, Sample

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isclose",
           "allclose", "equal", "all", "any"]


def _comparison(name: str, compare, symbol: str, example: str):
    def forward(ctx, a, b):
        x, y = operands(a, b, name)
        return compare(x, y)

    cls = type(name.capitalize(), (Op,), {
        "forward": staticmethod(forward), "__module__": __name__,
        "__doc__": f"Elementwise `a {symbol} b` (bool result, not differentiable)."})

    def function(input, other) -> Tensor:
        return cls.apply(input, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"Elementwise input {symbol} other: a bool tensor, broadcasting.\n\n"
                        f"    >>> import genesis\n"
                        f"    >>> genesis.tensor([1, 2, 3]) {symbol} 2\n"
                        f"    {example}\n    ")
    return cls, function


Eq, eq = _comparison("eq", lambda x, y: x == y, "==", "tensor([False,  True, False])")
Ne, ne = _comparison("ne", lambda x, y: x != y, "!=", "tensor([ True, False,  True])")
Lt, lt = _comparison("lt", lambda x, y: x < y, "<", "tensor([ True, False, False])")
Le, le = _comparison("le", lambda x, y: x <= y, "<=", "tensor([ True,  True, False])")
Gt, gt = _comparison("gt", lambda x, y: x > y, ">", "tensor([False, False,  True])")
Ge, ge = _comparison("ge", lambda x, y: x >= y, ">=", "tensor([False,  True,  True])")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _predicate(name: str, test, doc: str):
    def forward(ctx, a):
        return test(a._device.xp, a._data)

    cls = type(name.capitalize(), (Op,), {
        "forward": staticmethod(forward), "__module__": __name__, "__doc__": doc})

    def function(input: Tensor) -> Tensor:
        return cls.apply(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"{doc}\n\n    >>> import genesis\n"
                        f"    >>> genesis.{name}(genesis.tensor([1., float('nan'), float('inf'), "
                        f"-float('inf')]))\n    tensor({_VALUES_DOC[name]})\n    ")
    return cls, function


_VALUES_DOC = {"isnan": "[False,  True, False, False]", "isinf": "[False, False,  True,  True]",
               "isposinf": "[False, False,  True, False]",
               "isneginf": "[False, False, False,  True]",
               "isfinite": "[ True, False, False, False]"}

Isnan, isnan = _predicate("isnan", lambda xp, x: xp.isnan(x), "True where the value is nan.")
Isinf, isinf = _predicate("isinf", lambda xp, x: xp.isinf(x), "True where the value is +-inf.")
Isposinf, isposinf = _predicate("isposinf", lambda xp, x: x == math.inf,
                                "True where the value is +inf.")
Isneginf, isneginf = _predicate("isneginf", lambda xp, x: x == -math.inf,
                                "True where the value is -inf.")
Isfinite, isfinite = _predicate("isfinite", lambda xp, x: xp.isfinite(x),
                                "True where the value is neither nan nor +-inf.")


class Isclose(Op):
    """|a - b| <= atol + rtol * |b| elementwise (equal infinities count as close)."""

    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan):
        x, y = operands(a, b, "isclose")
        xp = a._device.xp
        return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Whether |input - other| <= atol + rtol * |other|, elementwise (a bool tensor).

    Both tensors must have the same dtype (as in PyTorch); `other` may be a number.

    >>> import genesis
    >>> genesis.isclose(genesis.tensor([1.0, 1.1]), genesis.tensor([1.0 + 1e-7, 1.0]))
    tensor([ True, False])
    """
    _check_tolerances("isclose", input, other, rtol, atol)
    return Isclose.apply(input, other, rtol, atol, equal_nan)


def _check_tolerances(op: str, input, other, rtol, atol) -> None:
    if isinstance(other, Tensor) and other.dtype is not input.dtype:
        raise RuntimeError(f"{op}: input is {input.dtype.name} but other is {other.dtype.name}; "
                           f"convert one first, e.g. other.to(input.dtype)")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"{op}: rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")


def allclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of input is close to other (see `isclose`): a Python bool.

    >>> import genesis
    >>> genesis.allclose(genesis.tensor([1., 2.]), genesis.tensor([1., 2. + 1e-6]))
    True
    """
    _check_tolerances("allclose", input, other, rtol, atol)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape and the same values: a Python bool.

    Values are compared after dtype promotion; nan is never equal to itself.

    >>> import genesis
    >>> genesis.equal(genesis.tensor([1, 2]), genesis.tensor([1., 2.]))
    True
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"equal: other must be a Tensor, got {type(other).__name__}")
    if input.shape != other.shape:
        return False
    x, y = operands(input, other, "equal")
    return bool(input._device.xp.all(x == y))


class All(Op):
    """True where every element (along `dims`) is nonzero."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return a._device.xp.all(a._data, axis=dims, keepdims=keepdim)


class Any(Op):
    """True where some element (along `dims`) is nonzero."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return a._device.xp.any(a._data, axis=dims, keepdims=keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether all elements are nonzero (over `dim`, or overall).

    >>> import genesis
    >>> genesis.tensor([[1, 0], [1, 1]]).all(dim=1)
    tensor([False,  True])
    """
    return All.apply(input, normalize_dims(dim, input.ndim, "all"), keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether any element is nonzero (over `dim`, or overall).

    >>> import genesis
    >>> genesis.tensor([[1, 0], [0, 0]]).any(dim=1)
    tensor([ True, False])
    """
    return Any.apply(input, normalize_dims(dim, input.ndim, "any"), keepdim)


METHODS = {
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "greater": gt,
    "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne, "isnan": isnan,
    "isinf": isinf, "isposinf": isposinf, "isneginf": isneginf, "isfinite": isfinite,
    "isclose": isclose, "allclose": allclose, "equal": equal, "all": all, "any": any,
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
}


def _comparison_samples(rng):
    """Values on a coarse grid, so that ties (where == and <= differ from < ) occur."""
    def grid(r, shape):
        return r.integers(-2, 3, size=shape).astype(np.float64)

    def integers(r, shape):
        return r.integers(-2, 3, size=shape)

    return (samples.binary(grid, grid, rng)
            + samples.with_scalar(grid, rng, 1.0) + samples.with_scalar(grid, rng, 0.5)
            + samples.scalar_first(grid, rng, 1)
            + [Sample((integers(rng, (3, 4)), grid(rng, (4,))), note="int64 vs float"),
               Sample((integers(rng, (3, 4)), 0.5), note="int64 vs 0.5"),
               Sample((integers(rng, (3, 4)) > 0, integers(rng, (3, 4))), note="bool vs int64")])


def _special_values(rng):
    values = np.array([0.0, 1.5, -2.0, np.nan, np.inf, -np.inf])
    return [Sample((rng.choice(values, size=(3, 4)),), note="nan and inf"),
            Sample((rng.integers(-2, 3, size=(3, 4)),), note="int64"),
            Sample((rng.choice(values, size=(4, 3)),), layout="transposed", note="transposed"),
            Sample((np.zeros((0, 2)),), note="zero-size")]


def _reduction_samples(rng):
    def mostly_true(r, shape):
        return r.random(shape) < 0.8

    return [Sample((mostly_true(rng, (3, 4)),), note="all"),
            Sample((mostly_true(rng, (3, 4)),), {"dim": 1}, note="dim 1"),
            Sample((rng.integers(0, 2, size=(3, 4)),), {"dim": 0, "keepdim": True},
                   note="int64, keepdim"),
            Sample((rng.random((2, 3)) < 0.5,), {"dim": -1}, layout="transposed",
                   note="transposed")]


def _isclose_samples(rng):
    a = samples.values(rng, (3, 4))
    near = a + rng.choice((0.0, 1e-9, 1e-4, np.nan), size=(3, 4))
    near[0, 0] = a[0, 0] = np.nan
    near[1, 1] = a[1, 1] = np.inf
    return [Sample((a, near), note="near, far, nan, inf"),
            Sample((a, near), {"equal_nan": True}, note="equal_nan"),
            Sample((a, near), {"rtol": 1e-3, "atol": 0.0}, note="rtol only"),
            Sample((a, a[0]), note="broadcast")]


def _torch_comparison(name: str):
    """The same comparison in PyTorch, by operator (so a number may come first)."""
    return lambda torch, a, b: getattr(operator, name)(a, b)


OPS = [OpInfo(name, globals()[name], _comparison_samples, differentiable=False,
              torch=_torch_comparison(name)) for name in ("eq", "ne", "lt", "le", "gt", "ge")] + [
    OpInfo(name, globals()[name], _special_values, differentiable=False,
           torch=lambda torch, a, name=name: getattr(torch, name)(a))
    for name in ("isnan", "isinf", "isposinf", "isneginf", "isfinite")] + [
    OpInfo("isclose", isclose, _isclose_samples, differentiable=False,
           torch=lambda torch, a, b, **kw: torch.isclose(a, b, **kw)),
    OpInfo("all", all, _reduction_samples, differentiable=False,
           torch=lambda torch, a, **kw: torch.all(a, **kw)),
    OpInfo("any", any, _reduction_samples, differentiable=False,
           torch=lambda torch, a, **kw: torch.any(a, **kw)),
]
