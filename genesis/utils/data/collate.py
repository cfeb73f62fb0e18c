"""How a DataLoader turns a list of samples into a batch (`default_collate`), and converts a
single sample when batching is off (`default_convert`), as PyTorch does: tensors and NumPy
arrays are stacked, numbers become a tensor, strings stay a list, and dicts, tuples and
lists are collated field by field."""
from __future__ import annotations

import collections.abc
import copy

import numpy as np

from ...creation import from_numpy, tensor
from ...dtypes import float64
from ...ops.join import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]


def default_collate(batch: list):
    """One batch from a list of samples.

    >>> import genesis
    >>> default_collate([(genesis.tensor([1., 2.]), 0), (genesis.tensor([3., 4.]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    >>> default_collate([{"x": 1.5, "name": "a"}, {"x": 2.5, "name": "b"}])
    {'x': tensor([1.5000, 2.5000], dtype=genesis.float64), 'name': ['a', 'b']}
    """
    element = batch[0]
    if isinstance(element, Tensor):
        return stack(list(batch), 0)
    if isinstance(element, np.ndarray) and element.dtype.kind not in "SUOa":
        return stack([from_numpy(np.ascontiguousarray(array)) for array in batch], 0)
    if isinstance(element, np.generic) and element.dtype.kind not in "SUOa":
        return from_numpy(np.array(batch))
    if isinstance(element, float):
        return tensor(batch, dtype=float64)
    if isinstance(element, int):  # bools too
        return tensor(batch)
    if isinstance(element, str | bytes):
        return batch  # as given: a list, or a tuple for a field of tuple samples
    if isinstance(element, collections.abc.Mapping):
        return _mapping_like(element, {key: default_collate([sample[key] for sample in batch])
                                       for key in element})
    if isinstance(element, tuple) and hasattr(element, "_fields"):  # a namedtuple
        return type(element)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(element, collections.abc.Sequence):
        size = len(element)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size "
                               f"(sizes {[len(sample) for sample in batch]})")
        fields = [default_collate(field) for field in zip(*batch)]
        if isinstance(element, tuple):
            return fields  # a list, as in PyTorch
        try:
            return type(element)(fields)
        except TypeError:
            return fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(element).__name__}. Pass collate_fn= to the "
                    "DataLoader to batch other samples.")


def default_convert(sample):
    """A sample as a DataLoader with batching off gives it: NumPy arrays and scalars as
    tensors, containers converted inside, anything else as it is."""
    if isinstance(sample, np.ndarray) and sample.dtype.kind not in "SUOa":
        return from_numpy(np.ascontiguousarray(sample))
    if isinstance(sample, np.generic) and sample.dtype.kind not in "SUOa":
        return from_numpy(np.array(sample))
    if isinstance(sample, collections.abc.Mapping):
        return _mapping_like(sample, {key: default_convert(value) for key, value in sample.items()})
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(default_convert(value) for value in sample))
    if isinstance(sample, tuple):
        return [default_convert(value) for value in sample]
    if isinstance(sample, collections.abc.Sequence) and not isinstance(sample, str | bytes):
        return [default_convert(value) for value in sample]
    return sample


def _mapping_like(original: collections.abc.Mapping, values: dict) -> collections.abc.Mapping:
    """`values` in a mapping of `original`'s type, as PyTorch builds it: a mutable mapping is
    copied and updated (a defaultdict keeps its default, an OrderedDict its class), another
    is built from a dict; a plain dict where neither works."""
    try:
        if isinstance(original, collections.abc.MutableMapping):
            clone = copy.copy(original)
            clone.update(values)
            return clone
        return type(original)(values)
    except TypeError:
        return values
