"""Comparisons and predicates: boolean results, no gradient."""
from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._operands import normalize_dims, operands

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "all", "any"]


def _comparison(name: str, compare):
    class Compare(Function):
        @staticmethod
        def forward(ctx, a, b):
            x, y = operands(a, b, name)
            return compare(x, y)

    Compare.__name__ = Compare.__qualname__ = name.capitalize()
    Compare.__doc__ = f"Elementwise `{name}` (bool result, not differentiable)."

    def function(input, other) -> Tensor:
        return Compare.apply(input, other)

    function.__name__ = name
    function.__doc__ = f"Elementwise {name}: a bool tensor, broadcasting."
    return Compare, function


Eq, eq = _comparison("eq", lambda x, y: x == y)
Ne, ne = _comparison("ne", lambda x, y: x != y)
Lt, lt = _comparison("lt", lambda x, y: x < y)
Le, le = _comparison("le", lambda x, y: x <= y)
Gt, gt = _comparison("gt", lambda x, y: x > y)
Ge, ge = _comparison("ge", lambda x, y: x >= y)


class All(Function):
    """True where every element (along `dims`) is nonzero."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return a._device.xp.all(a._data, axis=dims, keepdims=keepdim)


class Any(Function):
    """True where some element (along `dims`) is nonzero."""

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return a._device.xp.any(a._data, axis=dims, keepdims=keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether all elements are nonzero (over `dim`, or overall)."""
    return All.apply(input, normalize_dims(dim, input.ndim, "all"), keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether any element is nonzero (over `dim`, or overall)."""
    return Any.apply(input, normalize_dims(dim, input.ndim, "any"), keepdim)


METHODS = {
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "all": all, "any": any,
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
}
