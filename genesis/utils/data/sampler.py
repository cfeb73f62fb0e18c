"""Samplers: the order a DataLoader reads a map-style dataset in (`Sequential`, `Random`,
`SubsetRandom`, `WeightedRandom`), and `BatchSampler`, which groups indices into batches."""
from __future__ import annotations

import numpy as np

from ...creation import randint, randperm
from ...rng import Generator
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Yields dataset indices; subclasses define `__iter__` (and `__len__` when they can)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _epoch_generator(generator: Generator | None) -> Generator:
    """`generator`, or (as PyTorch does) a new one seeded from the global generator, so
    `genesis.manual_seed` makes the shuffles repeat while each epoch differs."""
    if generator is not None:
        return generator
    return Generator().manual_seed(int(randint(0, 2 ** 62, ()).item()))


class RandomSampler(Sampler):
    """A random order of the dataset's indices (a permutation; with `replacement`,
    `num_samples` independent draws)."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None):
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        count, wanted = len(self.data_source), self.num_samples
        generator = _epoch_generator(self.generator)
        if self.replacement:
            yield from randint(0, count, (wanted,), generator=generator).tolist()
            return
        for _ in range(wanted // count):
            yield from randperm(count, generator=generator).tolist()
        yield from randperm(count, generator=generator).tolist()[:wanted % count]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices`, in a random order."""

    def __init__(self, indices, generator: Generator | None = None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for position in randperm(len(self.indices), generator=_epoch_generator(self.generator)).tolist():
            yield self.indices[position]

    def __len__(self) -> int:
        return len(self.indices)


class SamplerWeightsError(ValueError, RuntimeError):
    """Weights a WeightedRandomSampler can't draw from. Raised when the sampler is made (PyTorch
    raises only when it is iterated, from torch.multinomial): a ValueError, and the
    RuntimeError PyTorch raises, so `except RuntimeError` written for PyTorch catches it."""


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        weights = np.asarray(weights.tolist() if isinstance(weights, Tensor) else weights, np.float64)
        if weights.ndim != 1 or (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
            raise SamplerWeightsError("WeightedRandomSampler: weights must be a 1-d sequence of "
                                      "finite, non-negative numbers with a positive sum")
        if not replacement and num_samples > np.count_nonzero(weights):
            raise SamplerWeightsError(f"WeightedRandomSampler: cannot draw {num_samples} samples "
                                      f"without replacement from {np.count_nonzero(weights)} with "
                                      "non-zero weight")
        self.weights, self.num_samples = weights, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        draws = _epoch_generator(self.generator).draws_on("cpu")
        chosen = draws.choice(len(self.weights), size=self.num_samples, replace=self.replacement,
                              p=self.weights / self.weights.sum())
        return iter(chosen.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter unless `drop_last`).

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        count = len(self.sampler)
        return count // self.batch_size if self.drop_last else -(-count // self.batch_size)
