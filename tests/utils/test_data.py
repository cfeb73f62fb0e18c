"""genesis.utils.data (torch.utils.data): datasets, samplers, collation and the DataLoader,
on this process and on workers, compared with PyTorch where it is importable."""
import collections
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import genesis
from genesis.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                                TensorDataset, WeightedRandomSampler, default_collate,
                                get_worker_info, random_split)
from tests.helpers import torch_or_skip

ROOT = Path(__file__).resolve().parents[2]
Point = collections.namedtuple("Point", "x y")


class Squares(Dataset):
    def __init__(self, count):
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        if index >= self.count:
            raise IndexError(index)
        return {"x": np.float32(index), "square": index * index}


class Countdown(IterableDataset):
    """Each worker takes every num_workers-th number (the documented way to split a stream)."""

    def __init__(self, start):
        self.start = start

    def __iter__(self):
        info = get_worker_info()
        step, offset = (1, 0) if info is None else (info.num_workers, info.id)
        return iter(range(self.start - offset, 0, -step))


class Broken(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        if index == 2:
            raise ValueError("sample 2 is corrupt")
        return index


def test_batches_in_order_with_the_last_one_short_or_dropped():
    data = TensorDataset(genesis.arange(10.0).reshape(5, 2), genesis.arange(5))
    loader = DataLoader(data, batch_size=2)
    batches = list(loader)
    assert len(loader) == 3 and [y.tolist() for _, y in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    dropped = DataLoader(data, batch_size=2, drop_last=True)
    assert len(dropped) == 2 and len(list(dropped)) == 2


def test_shuffle_visits_each_sample_once_repeatably_and_differs_between_epochs():
    data = TensorDataset(genesis.arange(20))
    loader = DataLoader(data, batch_size=4, shuffle=True)
    genesis.manual_seed(0)
    first = [i for (batch,) in loader for i in batch.tolist()]
    second = [i for (batch,) in loader for i in batch.tolist()]
    genesis.manual_seed(0)
    again = [i for (batch,) in loader for i in batch.tolist()]
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert first == again and first != second
    seeded = DataLoader(data, batch_size=4, shuffle=True, generator=genesis.Generator().manual_seed(3))
    other = DataLoader(data, batch_size=4, shuffle=True, generator=genesis.Generator().manual_seed(3))
    assert [b.tolist() for (b,) in seeded] == [b.tolist() for (b,) in other]


def test_batch_size_none_gives_single_converted_samples():
    loader = DataLoader(Squares(3), batch_size=None)
    samples = list(loader)
    assert len(loader) == 3 and samples[2]["square"] == 4
    assert isinstance(samples[2]["x"], genesis.Tensor) and samples[2]["x"].item() == 2.0


def test_default_collate_matches_pytorch():
    torch = torch_or_skip()
    from torch.utils.data import default_collate as torch_collate

    batches = [
        [(np.array([1.0, 2.0], np.float32), 1, "a"), (np.array([3.0, 4.0], np.float32), 2, "b")],
        [{"x": 1.5, "flag": True}, {"x": 2.5, "flag": False}],
        [Point(1, 2.0), Point(3, 4.0)],
        [[1, 2], [3, 4]],
        [np.float64(1.5), np.float64(2.5)],
    ]
    for batch in batches:
        mine, theirs = default_collate(batch), torch_collate(batch)
        assert _plain(mine) == _plain(theirs, torch), batch
    assert type(default_collate(batches[2])) is Point


def test_default_collate_keeps_container_types_as_pytorch():
    """genesis gave a list for the strings of tuple samples, and a dict for defaultdicts."""
    torch = torch_or_skip()
    from torch.utils.data import default_collate as torch_collate

    counts = collections.defaultdict(int, a=1)
    ordered = collections.OrderedDict(b=1.0, a=2.0)
    for batch in ([(1, "a"), (2, "b")], [counts, counts], [ordered, ordered], ["a", "b"]):
        mine, theirs = default_collate(batch), torch_collate(batch)
        assert type(mine) is type(theirs), batch
        if isinstance(mine, list):
            assert [type(field).__name__ for field in mine] == [type(field).__name__ for field in theirs]
    assert default_collate([counts, counts]).default_factory is int


def _plain(value, torch=None):
    """Collated structures as plain data with dtype names, to compare across libraries."""
    if isinstance(value, genesis.Tensor) or (torch is not None and isinstance(value, torch.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, dict):
        return {key: _plain(item, torch) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [type(value).__name__ if hasattr(value, "_fields") else "seq",
                [_plain(item, torch) for item in value]]
    return value


def test_default_collate_refuses_ragged_and_unknown_samples():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="collate_fn="):
        default_collate([object(), object()])


def test_random_split_counts_and_fractions_like_pytorch():
    torch = torch_or_skip()
    for lengths in ([7, 3], [0.7, 0.3], [0.34, 0.33, 0.33], [0.5, 0.5]):
        mine = random_split(range(10), lengths, generator=genesis.Generator().manual_seed(1))
        theirs = torch.utils.data.random_split(range(10), lengths)
        assert [len(part) for part in mine] == [len(part) for part in theirs]
        assert sorted(i for part in mine for i in part) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


def test_subsets_and_concatenation():
    data = Squares(5)
    assert Subset(data, [4, 0])[0]["square"] == 16 and len(Subset(data, [4, 0])) == 2
    joined = data + Squares(2)
    assert isinstance(joined, ConcatDataset) and len(joined) == 7
    assert joined[6]["square"] == 1 and joined[-1]["square"] == 1
    with pytest.raises(IndexError):
        joined[7]


class BatchFetched(Dataset):
    """Samples i -> [i, 10 * i]; a batch fetched in one call is marked (as a database or a
    tokenizer working on a whole batch would fetch it)."""

    def __init__(self, size, torch=None):
        self.size, self.calls, self.make = size, [], (torch or genesis).tensor

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.make([index, 10 * index])

    def __getitems__(self, indices):
        self.calls.append(list(indices))
        return [self.make([index, -1]) for index in indices]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_dataset_with_getitems_gets_each_batch_in_one_call_as_in_pytorch(num_workers):
    data = BatchFetched(7)
    batches = [batch.tolist() for batch in DataLoader(data, batch_size=3, num_workers=num_workers)]
    assert batches == [[[0, -1], [1, -1], [2, -1]], [[3, -1], [4, -1], [5, -1]], [[6, -1]]]
    if num_workers == 0:
        assert data.calls == [[0, 1, 2], [3, 4, 5], [6]]
    single = [batch.tolist() for batch in DataLoader(data, batch_size=None)]  # no batching:
    assert single[:2] == [[0, 0], [1, 10]]  # one sample at a time, through __getitem__
    through_subset = DataLoader(Subset(data, [6, 2, 4]), batch_size=2)
    assert [batch.tolist() for batch in through_subset] == [[[6, -1], [2, -1]], [[4, -1]]]
    torch = torch_or_skip()
    theirs = torch.utils.data.DataLoader(torch.utils.data.Subset(BatchFetched(7, torch), [6, 2, 4]),
                                         batch_size=2)
    assert [batch.tolist() for batch in theirs] == [[[6, -1], [2, -1]], [[4, -1]]]


def test_a_getitems_set_to_none_is_not_called():
    data = BatchFetched(4)
    data.__getitems__ = None  # PyTorch's fetcher tests it for truth too
    assert [batch.tolist() for batch in DataLoader(data, batch_size=2)] == [[[0, 0], [1, 10]],
                                                                          [[2, 20], [3, 30]]]


def test_samplers():
    genesis.manual_seed(0)
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    assert sorted(RandomSampler(range(6))) == list(range(6))
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 40))
    assert len(weighted) == 40 and set(weighted) <= {1, 3} and weighted.count(3) > weighted.count(1)
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, drop_last=False)) == 3


def test_bad_options_raise_what_pytorch_raises():
    torch = torch_or_skip()
    data, mine_data = torch.utils.data.TensorDataset(torch.arange(4)), TensorDataset(genesis.arange(4))
    cases = [dict(num_workers=-1), dict(sampler=[0, 1], shuffle=True),
             dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
             dict(prefetch_factor=2), dict(persistent_workers=True), dict(timeout=-1)]
    for options in cases:
        with pytest.raises(Exception) as theirs:
            torch.utils.data.DataLoader(data, **options)
        with pytest.raises(type(theirs.value)):
            DataLoader(mine_data, **options)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Countdown(3), shuffle=True)
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(genesis.zeros(3), genesis.zeros(4))


def test_refused_datasets_and_weights_raise_pytorchs_exception_types():
    """genesis raised ValueError or IndexError where PyTorch raises AssertionError,
    RuntimeError or ValueError, so `except` clauses written for PyTorch missed them."""
    torch = torch_or_skip()
    tdata = torch.utils.data
    cases = [
        (lambda: list(WeightedRandomSampler([-1.0, 1.0], 2)),
         lambda: list(tdata.WeightedRandomSampler([-1.0, 1.0], 2))),
        (lambda: list(WeightedRandomSampler([1.0, 1.0], 3, replacement=False)),
         lambda: list(tdata.WeightedRandomSampler([1.0, 1.0], 3, replacement=False))),
        (lambda: TensorDataset(genesis.ones(2), genesis.ones(3)),
         lambda: tdata.TensorDataset(torch.ones(2), torch.ones(3))),
        (lambda: ConcatDataset([]), lambda: tdata.ConcatDataset([])),
        (lambda: ConcatDataset([range(2)])[-3], lambda: tdata.ConcatDataset([range(2)])[-3]),
    ]
    for ours, theirs in cases:
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(type(expected.value)):
            ours()
    with pytest.raises(IndexError):  # still what iteration and sequence code expect
        ConcatDataset([range(2)])[-3]


def test_an_iterable_dataset_is_batched_and_has_a_length_only_if_it_does():
    loader = DataLoader(Countdown(5), batch_size=2)
    assert [batch.tolist() for batch in loader] == [[5, 4], [3, 2], [1]]
    with pytest.raises(TypeError):
        len(loader)


def test_workers_give_the_same_batches_in_the_same_order():
    data = TensorDataset(genesis.arange(23))
    here = [batch.tolist() for (batch,) in DataLoader(data, batch_size=4)]
    there = [batch.tolist() for (batch,) in DataLoader(data, batch_size=4, num_workers=2)]
    assert here == there


def test_a_loader_iterator_has_the_loaders_length_as_in_pytorch():
    batches = iter(DataLoader(list(range(5)), batch_size=2))
    assert len(batches) == 3 and len(list(batches)) == 3
    assert len(iter(DataLoader(list(range(5)), batch_size=2, num_workers=2))) == 3


class RandomDraws(Dataset):
    """Each sample is a draw from each random number generator a worker may use."""

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return (int(np.random.randint(0, 10 ** 9)), random.randint(0, 10 ** 9),
                genesis.randint(0, 10 ** 9, ()).item())


def _draws(**options):
    return [tuple(int(value) for value in sample)
            for sample in DataLoader(RandomDraws(), batch_size=None, num_workers=2, **options)]


def test_each_worker_seeds_numpy_random_and_genesis_differently():
    """NumPy's global generator was not seeded in the workers: forked workers drew the same
    NumPy numbers."""
    samples = _draws()
    for generator in range(3):
        assert len({sample[generator] for sample in samples}) == 4, samples


def test_the_loaders_generator_makes_the_workers_draws_repeat():
    """The workers' base seed was drawn from the global generator, ignoring `generator=`."""
    first = _draws(generator=genesis.Generator().manual_seed(123))
    assert _draws(generator=genesis.Generator().manual_seed(123)) == first
    assert _draws(generator=genesis.Generator().manual_seed(124)) != first


def test_workers_seed_numpy_as_pytorch_does_for_the_same_base_seed():
    torch_or_skip()
    from torch.utils.data._utils.worker import _generate_state

    from genesis.utils.data.worker import seed_worker

    for base_seed, worker_id in [(0, 0), (123456789012345, 3), (2 ** 62 + 5, 1)]:
        assert seed_worker(base_seed, worker_id) == base_seed + worker_id
        ours = np.random.get_state()[1][:4].tolist()
        np.random.seed(_generate_state(base_seed, worker_id))
        assert ours == np.random.get_state()[1][:4].tolist()


def test_a_shuffle_on_the_loaders_generator_is_the_same_with_or_without_workers():
    data = TensorDataset(genesis.arange(12))
    orders = [[i for (batch,) in DataLoader(data, batch_size=3, shuffle=True, num_workers=workers,
                                            generator=genesis.Generator().manual_seed(5))
               for i in batch.tolist()] for workers in (0, 2)]
    assert orders[0] == orders[1]


def _record_worker(worker_id):
    info = get_worker_info()
    assert info is not None and info.id == worker_id and info.num_workers == 2


def test_workers_run_their_init_and_know_who_they_are():
    seen = [int(batch) for batch in DataLoader(Countdown(6), batch_size=None, num_workers=2,
                                                       worker_init_fn=_record_worker)]
    assert seen == [6, 5, 4, 3, 2, 1]  # one from each worker in turn, as PyTorch orders them


def test_a_workers_error_is_raised_here_naming_the_worker():
    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process \d") as info:
        list(DataLoader(Broken(), batch_size=1, num_workers=2))
    assert "sample 2 is corrupt" in str(info.value)



_KILLED_MID_EPOCH = """\
import multiprocessing, os, signal
import genesis
from genesis.utils.data import DataLoader, TensorDataset
genesis.utils.data.worker.PARENT_CHECK_S = 0.2
batches = iter(DataLoader(TensorDataset(genesis.arange(1000)), batch_size=2, num_workers=2))
next(batches)
print(*(worker.pid for worker in multiprocessing.active_children()), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _ended(pid: int) -> bool:
    """Whether process `pid` is gone (or a zombie: ended, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_when_the_main_process_is_killed(tmp_path):
    """A main process killed by SIGKILL or SIGTERM can't stop its workers: they waited for a
    task forever, each a process left behind (PyTorch's end within seconds)."""
    printed, errors = tmp_path / "pids", tmp_path / "errors"  # (files: a pipe would stay
    with open(printed, "w") as stdout, open(errors, "w") as stderr:  # open while workers live)
        process = subprocess.run([sys.executable, "-c", _KILLED_MID_EPOCH], stdout=stdout,
                                 stderr=stderr, timeout=60,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.returncode == -signal.SIGKILL, errors.read_text()
    pids = [int(pid) for pid in printed.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 20
    while not all(_ended(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if not _ended(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the workers outlived their main process"
