"""DistributedSampler: PyTorch's partition of a dataset's indices among processes, exactly;
shuffled orders that are permutations, new each epoch, the same for the same seed + epoch."""
import pytest

import genesis.distributed as dist
from genesis.utils.data import DataLoader, TensorDataset
from genesis.utils.data.distributed import DistributedSampler
from tests.helpers import torch_or_skip

CASES = [(length, replicas, rank, drop_last)
         for length in (0, 1, 5, 10, 11, 17)
         for replicas in (1, 2, 3, 4, 7)
         for rank in sorted({0, replicas // 2, replicas - 1})
         for drop_last in (False, True)
         if length > 0 or drop_last]  # PyTorch's padding divides by zero for an empty dataset


@pytest.mark.parametrize("length, replicas, rank, drop_last", CASES)
def test_the_partition_is_pytorchs(length, replicas, rank, drop_last):
    torch = torch_or_skip()
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    mine = DistributedSampler(range(length), replicas, rank, shuffle=False, drop_last=drop_last)
    theirs = TorchSampler(range(length), replicas, rank, shuffle=False, drop_last=drop_last)
    assert list(mine) == list(theirs)
    assert (len(mine), mine.num_samples, mine.total_size) == \
        (len(theirs), theirs.num_samples, theirs.total_size)
    del torch


def test_every_index_is_read_once_between_the_replicas_without_drop_last():
    parts = [list(DistributedSampler(range(10), 3, rank, shuffle=False)) for rank in range(3)]
    assert sorted(sum(parts, [])) == sorted(list(range(10)) + [0, 1])  # padded: the first two
    assert [len(part) for part in parts] == [4, 4, 4]


def test_a_shuffle_is_a_permutation_new_each_epoch_and_repeatable():
    sampler = DistributedSampler(range(50), num_replicas=1, rank=0, seed=3)
    first = list(sampler)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert list(sampler) == first  # the same epoch again: the same order
    sampler.set_epoch(1)
    second = list(sampler)
    assert sorted(second) == list(range(50)) and second != first
    again = DistributedSampler(range(50), num_replicas=1, rank=0, seed=3)
    again.set_epoch(1)
    assert list(again) == second
    other_seed = DistributedSampler(range(50), num_replicas=1, rank=0, seed=4)
    other_seed.set_epoch(1)
    assert list(other_seed) != second


def test_shuffled_parts_of_the_replicas_cover_the_dataset():
    parts = [DistributedSampler(range(20), num_replicas=4, rank=rank, seed=1) for rank in range(4)]
    for part in parts:
        part.set_epoch(5)
    assert sorted(sum((list(part) for part in parts), [])) == list(range(20))


def test_without_num_replicas_it_asks_the_process_group(one_process):
    sampler = DistributedSampler(range(7), shuffle=False)
    assert (sampler.num_replicas, sampler.rank, list(sampler)) == (1, 0, list(range(7)))


def test_without_a_process_group_it_raises_as_pytorch(real_dist):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    with pytest.raises(ValueError) as mine:
        DistributedSampler(range(4))
    with pytest.raises(ValueError) as theirs:
        TorchSampler(range(4))
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("replicas, rank", [(2, 2), (2, -1), (0, 0)])
def test_an_invalid_rank_is_pytorchs_error(replicas, rank):
    with pytest.raises(ValueError, match=rf"^Invalid rank {rank}, rank should be in the interval "
                                         rf"\[0, {replicas - 1}\]$"):
        DistributedSampler(range(4), num_replicas=replicas, rank=rank)


def test_a_data_loader_reads_the_part():
    import genesis
    dataset = TensorDataset(genesis.arange(10))
    sampler = DistributedSampler(dataset, num_replicas=2, rank=1, shuffle=False)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler)
    assert [batch[0].tolist() for batch in loader] == [[1, 3], [5, 7], [9]]
    assert dist.is_initialized() is False
