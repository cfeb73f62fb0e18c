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
           "size_of", "known_size", "show_sizes_as", "with_article"]


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
    """A shape, as a tuple of ints (PyTorch's `torch.Size`): what `t.shape` and `t.size()`
    return. It compares and hashes as the tuple of its extents; slicing it, adding a tuple
    to it or repeating it gives a Size again, as in PyTorch.

    >>> size = Size([2, 3, 4])
    >>> size == (2, 3, 4), size.numel(), size[1:], size[0]
    (True, 24, genesis.Size([3, 4]), 2)
    >>> size + (5,)
    genesis.Size([2, 3, 4, 5])
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, (integer(size, "a size must be an int, got", "Size")
                                     for size in sizes))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for `Size([])`)."""
        count = 1
        for size in self:
            count *= size
        return count

    def __getitem__(self, index):
        if index.__class__ is slice:
            return _new_tuple(Size, _tuple_item(self, index))
        return _tuple_item(self, index)

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _new_tuple(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _new_tuple(Size, tuple.__add__(other, self))

    def __mul__(self, times):
        return _new_tuple(Size, tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)

    def __repr__(self) -> str:
        return f"{_shown_as[0]}.Size({list(self)})"


_new_tuple = tuple.__new__  # a Size of extents known to be ints, without Size's checks
_tuple_item = tuple.__getitem__


_shown_as = ["genesis"]  # the module a Size's repr names: "torch" while genesis serves torch


def show_sizes_as(module: str) -> str:
    """Print sizes as `module.Size([...])` from now on ("torch" while
    `genesis.compat.serve_torch` runs a PyTorch script, as `show_dtypes_as` does for dtypes);
    returns the module named before.

    >>> before = show_sizes_as("torch"); repr(Size([2, 3])), show_sizes_as(before)
    ('torch.Size([2, 3])', 'torch')
    """
    before, _shown_as[0] = _shown_as[0], module
    return before


# The Size of each array shape seen lately ({shape tuple: Size}): `t.shape` runs on hot
# paths, and making a tuple subclass costs twice what reading the array's shape does, so a
# shape's Size (immutable, like the tuple) is made once and handed out again.
known_sizes: dict = {}
known_size = known_sizes.get  # the Size kept for a shape tuple, or None
_KNOWN_SIZES_KEPT = 4096  # the table is emptied when it grows past this many shapes


def size_of(shape: tuple) -> Size:
    """The Size of an array's `shape` (a tuple of ints), made without checking its extents
    (they are an array's), and kept in `known_sizes` for the next time.

    >>> size_of((2, 3))
    genesis.Size([2, 3])
    """
    if len(known_sizes) >= _KNOWN_SIZES_KEPT:
        known_sizes.clear()
    size = known_sizes[shape] = _new_tuple(Size, shape)
    return size
