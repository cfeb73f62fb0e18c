"""`_foreach_*`: an op applied to each tensor of a list (PyTorch's multi-tensor ops, which
optimizers use), returning a list; the `_`-suffixed forms change each tensor in place and
return None. Each entry is the plain op on that tensor, so autograd, version counters and
in-place rules are the ops' own. Binary forms take a number, a tensor (the same for every
entry), or a list of numbers or tensors (one per entry); add and sub take `alpha`. `lerp`
takes a list of ends and a weight of either kind (EMA updates: `_foreach_lerp_(ema, live,
1 - decay)`); `zero_` and `copy_` are the in-place fills.

>>> import genesis
>>> xs = [genesis.tensor([0.]), genesis.tensor([1., 2.])]
>>> genesis._foreach_add(xs, [1, 10])
[tensor([1.]), tensor([11., 12.])]
>>> genesis._foreach_mul_(xs, 2); xs
[tensor([0.]), tensor([2., 4.])]
"""
from __future__ import annotations

from ..tensor import Tensor
from . import elementwise, ternary, unary

_UNARY = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "sin",
          "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "abs",
          "sign")
_BINARY = ("add", "sub", "mul", "div")

__all__ = ([f"_foreach_{name}" for name in _UNARY + ("neg",)]
           + [f"_foreach_{name}_" for name in _UNARY + ("neg",)]
           + [f"_foreach_{name}" for name in _BINARY] + [f"_foreach_{name}_" for name in _BINARY]
           + ["_foreach_lerp", "_foreach_lerp_", "_foreach_zero_", "_foreach_copy_"])


def _checked(name: str, tensors) -> list:
    tensors = list(tensors)
    for index, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name}: expected a list of Tensors, got {type(tensor).__name__} at "
                            f"index {index}")
    return tensors


def _others(name: str, tensors: list, other) -> list:
    """The second operand of each entry: `other` itself, or its entries when it is a list."""
    if isinstance(other, list | tuple):
        if len(other) != len(tensors):
            raise RuntimeError(f"{name}: tensor lists must have the same number of tensors, got "
                               f"{len(tensors)} and {len(other)}")
        return list(other)
    return [other] * len(tensors)


def _unary(name: str, function, inplace: bool):
    label = f"_foreach_{name}{'_' if inplace else ''}"
    if inplace:
        def foreach(self) -> None:
            for tensor in _checked(label, self):
                getattr(tensor, f"{name}_")()
    else:
        def foreach(self) -> list:
            return [function(tensor) for tensor in _checked(label, self)]
    foreach.__name__ = foreach.__qualname__ = label
    foreach.__doc__ = (f"{'In place: ' if inplace else ''}{name} of each tensor of the list"
                       f"{'' if inplace else ' (a new list)'}.")
    return foreach


def _binary(name: str, function, inplace: bool):
    label = f"_foreach_{name}{'_' if inplace else ''}"
    takes_alpha = name in ("add", "sub")

    def pairs(self, other):
        tensors = _checked(label, self)
        return zip(tensors, _others(label, tensors, other))

    if inplace:
        def foreach(self, other, *, alpha=1) -> None:
            for tensor, value in pairs(self, other):
                method = getattr(tensor, f"{name}_")
                method(value, alpha=alpha) if takes_alpha else method(value)
    else:
        def foreach(self, other, *, alpha=1) -> list:
            return [function(tensor, value, alpha=alpha) if takes_alpha else function(tensor, value)
                    for tensor, value in pairs(self, other)]
    foreach.__name__ = foreach.__qualname__ = label
    foreach.__doc__ = (f"{'In place: ' if inplace else ''}{name} of each tensor of the list and "
                       "`other` (a number, a tensor, or a list of one per entry)"
                       f"{'' if inplace else ', as a new list'}.")
    return foreach


_FUNCTIONS = {**{name: getattr(unary, name) for name in _UNARY}, "neg": elementwise.neg}
globals().update({f"_foreach_{name}": _unary(name, function, False)
                  for name, function in _FUNCTIONS.items()})
globals().update({f"_foreach_{name}_": _unary(name, function, True)
                  for name, function in _FUNCTIONS.items()})
globals().update({f"_foreach_{name}": _binary(name, getattr(elementwise, name), False)
                  for name in _BINARY})
globals().update({f"_foreach_{name}_": _binary(name, getattr(elementwise, name), True)
                  for name in _BINARY})


def _foreach_lerp(self, tensors1, weight) -> list:
    """lerp of each tensor of the list towards its entry of `tensors1` by `weight` (a number,
    a tensor, or a list of one per entry), as a new list."""
    tensors = _checked("_foreach_lerp", self)
    return [ternary.lerp(tensor, end, value) for tensor, end, value in
            zip(tensors, _others("_foreach_lerp", tensors, list(tensors1)),
                _others("_foreach_lerp", tensors, weight))]


def _foreach_lerp_(self, tensors1, weight) -> None:
    """In place: lerp of each tensor of the list towards its entry of `tensors1` by `weight`
    (a number, a tensor, or a list of one per entry).

    >>> import genesis
    >>> ema, live = [genesis.zeros(2)], [genesis.ones(2)]
    >>> _foreach_lerp_(ema, live, 0.25); ema
    [tensor([0.2500, 0.2500])]
    """
    tensors = _checked("_foreach_lerp_", self)
    for tensor, end, value in zip(tensors, _others("_foreach_lerp_", tensors, list(tensors1)),
                                  _others("_foreach_lerp_", tensors, weight)):
        tensor.lerp_(end, value)


def _foreach_zero_(self) -> None:
    """In place: zero each tensor of the list."""
    for tensor in _checked("_foreach_zero_", self):
        tensor.zero_()


def _foreach_copy_(self, src, non_blocking: bool = False) -> None:
    """In place: copy each entry of `src` into its tensor of the list."""
    tensors = _checked("_foreach_copy_", self)
    for tensor, value in zip(tensors, _others("_foreach_copy_", tensors, list(src))):
        tensor.copy_(value, non_blocking=non_blocking)


METHODS: dict = {}
OPS: list = []
