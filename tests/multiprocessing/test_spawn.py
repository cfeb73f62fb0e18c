"""genesis.multiprocessing.spawn / start_processes: fn(i, *args) in new processes, and the
first failure raised in the parent as PyTorch's spawn raises it."""
import os
import sys

import pytest

import genesis.multiprocessing as mp
from tests.helpers import torch_or_skip


def _write_index(index, folder):
    with open(os.path.join(folder, f"{index}.txt"), "w") as handle:
        handle.write(str(index))


def _raise_in_one(index):
    if index == 1:
        raise ValueError("worker one is unhappy")


def _exit_with_code(index):
    sys.exit(3 if index == 0 else 0)


def test_spawn_runs_fn_with_each_index(tmp_path):
    assert mp.spawn(_write_index, args=(str(tmp_path),), nprocs=3) is None
    assert sorted(path.name for path in tmp_path.iterdir()) == ["0.txt", "1.txt", "2.txt"]


def test_start_processes_without_join_returns_a_context_to_join(tmp_path):
    context = mp.start_processes(_write_index, args=(str(tmp_path),), nprocs=2, join=False,
                                 start_method="fork")
    assert len(context.pids()) == 2
    while not context.join(timeout=30):
        pass
    assert len(list(tmp_path.iterdir())) == 2


def test_a_raising_process_is_reported_with_its_traceback_as_pytorch():
    torch = torch_or_skip()
    import torch.multiprocessing as torch_mp
    raised = []
    for library in (mp, torch_mp):
        with pytest.raises(library.ProcessRaisedException) as info:
            library.start_processes(_raise_in_one, nprocs=2, start_method="fork")
        raised.append(info.value)
    ours, theirs = raised
    assert ours.error_index == theirs.error_index == 1
    for error in raised:
        assert str(error).startswith("\n\n-- Process 1 terminated with the following error:\n")
        assert "ValueError: worker one is unhappy" in str(error)


def test_a_process_that_exits_badly_is_reported_with_its_code():
    torch = torch_or_skip()
    import torch.multiprocessing as torch_mp
    messages = []
    for library in (mp, torch_mp):
        with pytest.raises(library.ProcessExitedException) as info:
            library.start_processes(_exit_with_code, nprocs=2, start_method="fork")
        assert info.value.exit_code == 3 and info.value.error_index == 0
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "process 0 terminated with exit code 3"


def test_spawn_with_another_start_method_warns_and_spawns(tmp_path):
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_write_index, args=(str(tmp_path),), nprocs=1, start_method="fork")
    assert (tmp_path / "0.txt").exists()
