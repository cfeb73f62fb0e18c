"""CPU helper threads: parts run at once and all finish before run_parts returns, errors
reach the caller, the count follows set_num_threads, a forked child gets its own threads,
and a formula shared out among threads gives the same bits as one thread."""
import os
import threading

import numpy as np
import pytest

import genesis
from genesis import cpu_workers
from genesis.ops._blockwise import _BLOCK, in_blocks


@pytest.fixture
def threads():
    """Set the helper count for a test; restored afterwards."""
    before = cpu_workers.thread_count()
    yield cpu_workers.set_thread_count
    cpu_workers.set_thread_count(before)


def test_every_part_runs_and_on_its_own_thread_but_the_first():
    ran = {}
    started = threading.Barrier(3, timeout=10)  # only passes when all three run at once

    def part(index):
        def run():
            started.wait()
            ran[index] = threading.current_thread()
        return run

    cpu_workers.run_parts([part(0), part(1), part(2)])
    assert sorted(ran) == [0, 1, 2]
    assert ran[0] is threading.current_thread()
    assert ran[1] is not ran[2] and all(ran[i].daemon for i in (1, 2))


def test_an_error_in_a_part_is_raised_after_every_part_finished():
    finished = []

    def slow():
        threading.Event().wait(0.05)
        finished.append("slow")

    def broken():
        raise ValueError("part 2 broke")

    with pytest.raises(ValueError, match="part 2 broke"):
        cpu_workers.run_parts([slow, broken, slow])
    assert finished == ["slow", "slow"]
    cpu_workers.run_parts([lambda: finished.append("again"), lambda: None])  # still serving
    assert finished[-1] == "again"


def test_the_count_follows_set_num_threads(threads):
    before = genesis.get_num_threads()
    try:
        genesis.set_num_threads(1)
        assert cpu_workers.thread_count() == 1
        genesis.set_num_threads(3)
        assert cpu_workers.thread_count() == 3
    finally:
        genesis.set_num_threads(before)


def test_the_default_count_takes_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cpu_workers._default_count() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    assert cpu_workers._default_count() >= 1


@pytest.mark.parametrize("count", [1, 2, 5])
def test_a_formula_in_blocks_gives_the_same_bits_on_any_number_of_threads(threads, count):
    x = np.random.default_rng(0).standard_normal(5 * _BLOCK + 11).astype(np.float32)

    def formula(a):
        return np.tanh(a * 1.7) * a + np.exp(-a * a)

    threads(count)
    np.testing.assert_array_equal(in_blocks(np, formula, x), formula(x))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_parts_on_threads_of_its_own(threads):
    threads(2)
    cpu_workers.run_parts([lambda: None, lambda: None])  # the parent's helper exists
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            seen = []
            cpu_workers.run_parts([lambda: seen.append(1), lambda: seen.append(2)])
            os.write(write, b"ok" if sorted(seen) == [1, 2] else b"bad")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(child, 0)
    assert os.read(read, 10) == b"ok" and status == 0
