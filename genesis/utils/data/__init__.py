"""Loading data in batches (PyTorch's `torch.utils.data`): datasets, samplers, collation
and the DataLoader, on this process or on worker processes."""
from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .worker import WorkerInfo, get_worker_info

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "default_collate",
           "default_convert", "get_worker_info", "WorkerInfo"]
