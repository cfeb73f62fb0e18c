"""Checking the integer arguments users pass: sizes, dims, counts.

An extent, a dim or a count is an int, a NumPy integer or a one-element integer tensor
(anything with `__index__`); a float, a bool, a string or None is a TypeError naming the
argument, as in PyTorch, never a silent truncation (`zeros(2.5)` does not make 2 zeros).
Sizes may be separate ints or one sequence: `zeros(2, 3)` or `zeros((2, 3))`.

>>> shape_of((2, 3), "zeros"), shape_of(([2, 3],), "zeros")
((2, 3), (2, 3))
>>> shape_of((2.5,), "zeros")
Traceback (most recent call last):
...
TypeError: zeros: size must be a tuple of ints, but element 0 of (2.5,) is a float (2.5)
>>> normalize_dim(-1, 3, "sum")
2
"""
from __future__ import annotations

import operator

__all__ = ["shape_of", "integer", "integers", "normalize_dim", "normalize_dims", "describe_value", "Size",
           "with_article"]


def shape_of(size: tuple, op: str, inferred: bool = False) -> tuple:
    """The shape given by `size` (separate extents, or one tuple/list of them).

    Extents must be >= 0; with `inferred`, -1 is let through (reshape, view and expand
    resolve it and reject other negative extents with their own message).
    """
    if len(size) == 1 and isinstance(size[0], tuple | list):
        size = size[0]
    lowest = -1 if inferred else 0
    for extent in size:
        if extent.__class__ is not int or extent < lowest:
            return _checked_shape(tuple(size), op, inferred)
    return tuple(size)


def _checked_shape(size: tuple, op: str, inferred: bool) -> tuple:
    shape = tuple(integer(extent, f"size must be a tuple of ints, but element {index} of "
                                  f"{size!r} is", op) for index, extent in enumerate(size))
    for extent in shape:
        if extent < 0 and not (inferred and extent == -1):
            raise RuntimeError(f"{op}: negative extent {extent} in size {shape}: every extent "
                               "must be 0 or more")
    return shape


def integers(values, what: str, op: str) -> tuple:
    """`values` (a sequence) as a tuple of ints, each checked as `integer` checks one (all of
    them before anything else about them, as PyTorch parses arguments first).

    >>> integers([1, 2], "dims must be ints, got", "permute")
    (1, 2)
    """
    for value in values:
        if value.__class__ is not int:
            return tuple(integer(value, what, op) for value in values)
    return tuple(values)


def integer(value, what: str, op: str) -> int:
    """`value` as an int; a TypeError "{op}: {what} a float (2.5)" when it is not integral.

    >>> integer(3, "steps must be an int, got", "linspace")
    3
    """
    if value.__class__ is int:
        return value
    if isinstance(value, bool):
        raise TypeError(f"{op}: {what} a bool ({value!r}); pass an int")
    try:
        return operator.index(value)
    except TypeError:
        hint = f"; pass int({value!r}) if you mean {int(value)}" \
            if isinstance(value, float) and value.is_integer() else ""
        raise TypeError(f"{op}: {what} {describe_value(value)}{hint}") from None


def normalize_dim(dim, ndim: int, op: str = "op") -> int:
    """A dim in [-ndim, ndim) as a non-negative index, else an IndexError (a TypeError
    when `dim` is not an int)."""
    if dim.__class__ is not int:
        dim = integer(dim, "dim must be an int, got", op)
    extent = ndim if ndim > 1 else 1
    if not -extent <= dim < extent:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dimension(s) "
                         f"(expected a value in [{-extent}, {extent - 1}])")
    return dim % extent


def normalize_dims(dim, ndim: int, op: str = "op"):
    """None (all dims), or a sorted tuple of non-negative dims from an int or a sequence.
    As in PyTorch, an empty sequence means all dims, and so does dim 0 (or -1) of a 0-d
    tensor, which is the tensor itself.

    >>> normalize_dims((-1, 0), 3), normalize_dims([], 3), normalize_dims(0, 0)
    ((0, 2), None, None)
    """
    if dim is None:
        return None
    if isinstance(dim, tuple | list):
        dims = tuple(normalize_dim(d, ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: dim {tuple(dim)} names a dimension more than once")
    else:
        dims = (normalize_dim(dim, ndim, op),)
    return tuple(sorted(dims)) if dims and ndim else None


def describe_value(value) -> str:
    """How a message names a wrong value: its type and (shortened) repr.

    >>> describe_value(2.5), describe_value(None), describe_value([1] * 50)[:16]
    ('a float (2.5)', 'None', 'a list ([1, 1, 1')
    """
    if value is None:
        return "None"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{with_article(type(value).__name__)} ({text})"


def with_article(noun: str) -> str:
    """`noun` after "a" or "an": with_article("int") is "an int"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


class Size(tuple):
    """A shape, as a tuple of ints (PyTorch's `torch.Size`): `Size([2, 3])`, `numel()`.
    Tensor shapes are plain tuples and compare equal to it.

    >>> Size([2, 3]) == (2, 3), Size([2, 3]).numel()
    (True, 6)
    """

    def __new__(cls, sizes=()):
        return super().__new__(cls, (integer(size, "a size must be an int, got", "Size")
                                     for size in sizes))

    def numel(self) -> int:
        count = 1
        for size in self:
            count *= size
        return count

    def __repr__(self) -> str:
        return f"genesis.Size({list(self)})"
