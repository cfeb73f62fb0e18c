"""Tensors whose gradient PyTorch would make sparse: the weights of `F.embedding` and
`F.embedding_bag` called with `sparse=True` (and so of `nn.Embedding(sparse=True)`).

Genesis has no sparse tensors: those gradients are dense, zero in the rows no index looked
up. `SparseAdam`, which PyTorch runs only on sparse gradients, reads this mark to accept a
weight's gradient and update only the rows that gradient holds (see
`genesis.optim.SparseAdam`); any other gradient it refuses, as PyTorch does.

>>> import genesis
>>> weight = genesis.randn(4, 2, requires_grad=True)
>>> is_marked(weight)
False
>>> mark(weight); is_marked(weight)
True
"""
from __future__ import annotations

import weakref

__all__ = ["mark", "is_marked"]

_marked: dict = {}  # id(tensor) -> weak reference to it


def mark(tensor) -> None:
    """Note that `tensor`'s gradient is one PyTorch would make sparse."""
    key = id(tensor)
    _marked[key] = weakref.ref(tensor, lambda _, key=key: _marked.pop(key, None))


def is_marked(tensor) -> bool:
    """Whether `tensor` was given to an embedding with sparse=True."""
    ref = _marked.get(id(tensor))
    return ref is not None and ref() is tensor
