"""Datasets (PyTorch's `torch.utils.data`): the map-style `Dataset` (`dataset[i]`, `len`),
the `IterableDataset` (a stream), and the ready-made ones programs use: `TensorDataset`,
`Subset`, `ConcatDataset` and `random_split`."""
from __future__ import annotations

import bisect
import math

from ...creation import randperm
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` and, for samplers that
    need it (shuffling), `__len__`. `a + b` concatenates two datasets. As in PyTorch, a
    subclass may also define `__getitems__(indices)`, the list of samples of a batch: the
    DataLoader then fetches each batch with one call of it."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define `__iter__`. In a DataLoader with
    workers, each worker iterates its own copy (split the work with `get_worker_info()`)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class DatasetArgumentError(ValueError, AssertionError):
    """Tensors or datasets a dataset can't be made of: a ValueError, and the AssertionError
    PyTorch raises (it asserts), so `except AssertionError` written for PyTorch catches it."""


class IndexBeyondStartError(IndexError, ValueError):
    """A negative index past the start of a ConcatDataset: an IndexError (iteration and
    sequence code expect one), and the ValueError PyTorch raises."""


class TensorDataset(Dataset):
    """Samples are the i-th rows of `tensors` (which share their first dimension), as a tuple.

    >>> import genesis
    >>> data = TensorDataset(genesis.arange(6).reshape(3, 2), genesis.tensor([0, 1, 0]))
    >>> len(data), data[1]
    (3, (tensor([2, 3]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        size = tensors[0].shape[0] if tensors[0].ndim else None
        if any(not isinstance(t, Tensor) or t.ndim == 0 or t.shape[0] != size for t in tensors):
            shapes = ", ".join(str(tuple(getattr(t, "shape", ()))) for t in tensors)
            raise DatasetArgumentError(f"Size mismatch between tensors: TensorDataset needs tensors "
                                       f"with the same first dimension (one row per sample), got "
                                       f"shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple([tensor[index] for tensor in self.tensors])

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        """The samples at `indices` (a batch, as the DataLoader asks for it): fetched in one
        call when the dataset has `__getitems__` too, else one by one."""
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[index] for index in indices])
        return [self.dataset[self.indices[index]] for index in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise DatasetArgumentError("ConcatDataset needs at least one dataset (datasets should "
                                       "not be an empty iterable)")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise ValueError("ConcatDataset does not take an IterableDataset (it has no length)")
        self.cumulative_sizes = []
        total = 0
        for dataset in self.datasets:
            total += len(dataset)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise IndexBeyondStartError(f"index {index} is out of range for a dataset of "
                                            f"{len(self)} samples (absolute value of index should "
                                            "not exceed dataset length)")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which == len(self.datasets):
            raise IndexError(f"index {index} is out of range for a dataset of {len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset: Dataset, lengths, generator=None) -> list:
    """`dataset` split at random into non-overlapping Subsets of `lengths` (counts, or
    fractions that sum to 1: each gets floor(fraction * n), the rest handed out one by one
    from the first), drawn from `generator` when given.

    >>> import genesis
    >>> train, test = random_split(range(10), [0.8, 0.2], generator=genesis.Generator().manual_seed(0))
    >>> len(train), len(test), sorted(list(train) + list(test)) == list(range(10))
    (8, 2, True)
    """
    total = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and not all(
            isinstance(length, int) for length in lengths):
        if any(not 0 <= fraction <= 1 for fraction in lengths):
            raise ValueError(f"random_split: fractions must be in [0, 1], got {lengths}")
        counts = [math.floor(total * fraction) for fraction in lengths]
        for index in range(total - sum(counts)):
            counts[index % len(counts)] += 1
        lengths = counts
    if sum(lengths) != total:
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {lengths} sum to {sum(lengths)}; the dataset has {total} samples)")
    order = randperm(total, generator=generator).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets
