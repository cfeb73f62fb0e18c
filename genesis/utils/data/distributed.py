"""`DistributedSampler`: the part of a dataset one process of a distributed run reads,
PyTorch's partition exactly: the indices (shuffled from `seed + epoch`, or in order) are
padded by repeating the first ones until every process gets as many (or, with `drop_last`,
cut to that), then process `rank` takes every `num_replicas`-th from its own rank on.

>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
[1, 3, 0]
>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False, drop_last=True))
[1, 3]
"""
from __future__ import annotations

import math

from ...creation import randperm
from ...distributed.process_group import get_rank, get_world_size
from ...rng import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of `dataset` that process `rank` of `num_replicas` reads; both default to
    the process group's (a ValueError, as PyTorch's, before `init_process_group`). Call
    `set_epoch(epoch)` at each epoch's start for a new shuffle each epoch; the same
    `seed + epoch` gives the same order.

    >>> sampler = DistributedSampler(range(4), num_replicas=1, rank=0, seed=7)
    >>> sorted(sampler) == [0, 1, 2, 3], len(sampler)
    (True, 4)
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None:
            num_replicas = get_world_size()
        if rank is None:
            rank = get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        if self.shuffle:
            generator = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration shuffles for (its order is drawn from `seed + epoch`)."""
        self.epoch = epoch
