"""`torch._VF` (PyTorch's private home of some functions it wraps in Python) and the private
unique functions PyTorch's own tests call (`torch._unique`, `torch._unique2`), each genesis's
`unique` with the signature and result tuple of the private one.

>>> import genesis
>>> values, inverse = _unique(genesis.tensor([3, 1, 3]), return_inverse=True)
>>> values.tolist(), inverse.tolist()
([1, 3], [1, 0, 1])
"""
from __future__ import annotations

from ..ops.composites import unique

__all__ = ["unique_dim", "_unique", "_unique2"]


def _unique(input, sorted: bool = True, return_inverse: bool = False) -> tuple:
    """`torch._unique`: (values, inverse); inverse is empty unless `return_inverse`.

    >>> import genesis
    >>> [t.tolist() for t in _unique(genesis.tensor([2, 2, 5]))]
    [[2, 5], []]
    """
    values, inverse = unique(input, sorted=sorted, return_inverse=True)
    return values, inverse if return_inverse else inverse[:0]


def _unique2(input, sorted: bool = True, return_inverse: bool = False,
             return_counts: bool = False) -> tuple:
    """`torch._unique2`: (values, inverse, counts); the last two are empty unless asked for.

    >>> import genesis
    >>> [t.tolist() for t in _unique2(genesis.tensor([2, 2, 5]), return_counts=True)]
    [[2, 5], [], [2, 1]]
    """
    values, inverse, counts = unique(input, sorted=sorted, return_inverse=True, return_counts=True)
    return values, inverse if return_inverse else inverse[:0], counts if return_counts else counts[:0]


def unique_dim(input, dim: int, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False) -> tuple:
    """`torch._VF.unique_dim`: the unique slices along `dim`, as (values, inverse, counts); as in
    PyTorch, the inverse and counts are computed whatever the flags say.

    >>> import genesis
    >>> values, _, counts = unique_dim(genesis.tensor([[1, 2], [1, 2], [0, 1]]), 0, return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([[0, 1], [1, 2]], [1, 2])
    """
    return unique(input, sorted=sorted, return_inverse=True, return_counts=True, dim=dim)
