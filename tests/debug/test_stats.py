"""Statistics of tensors: small host arrays are batched until the Readings fetches, and the
figures are those of the array when it was handed over, NaN and Inf counted apart."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import genesis
from genesis.debug import stats
from genesis.debug.readings import Readings

CPU = genesis.device("cpu")


def reference_values(array) -> dict:
    """The value statistics, straight from NumPy."""
    flat = array.astype(np.float64).ravel()
    finite = flat[np.isfinite(flat)]
    nan = int(np.isnan(flat).sum())
    if not finite.size:
        return {"min": None, "max": None, "mean": None, "abs_mean": None, "nan": nan,
                "inf": flat.size - nan}
    return {"min": finite.min(), "max": finite.max(), "mean": finite.sum() / finite.size,
            "abs_mean": np.abs(finite).sum() / finite.size, "nan": nan,
            "inf": flat.size - finite.size - nan}


def reference_grads(array) -> dict:
    flat = array.astype(np.float64).ravel()
    finite = flat[np.isfinite(flat)]
    nan = int(np.isnan(flat).sum())
    return {"norm": math.sqrt((finite ** 2).sum()) if finite.size else None,
            "max_abs": np.abs(finite).max() if finite.size else None, "nan": nan,
            "inf": flat.size - finite.size - nan,
            "zero_fraction": (flat.size - np.count_nonzero(flat)) / flat.size}


def assert_figures(found: dict, expected: dict) -> None:
    assert list(found) == list(expected)
    for key, value in expected.items():
        if value is None:
            assert found[key] is None, key
        else:
            assert found[key] == pytest.approx(value, rel=1e-12, abs=0), key


def arrays():
    rng = np.random.default_rng(0)
    cases = [rng.standard_normal(shape).astype(dtype) for shape in [(1,), (3, 4), (16,), (2, 3, 5)]
             for dtype in (np.float16, np.float32, np.float64)]
    spoiled = rng.standard_normal(20)
    spoiled[[3, 5, 7]] = np.nan, np.inf, -np.inf
    return cases + [spoiled, np.array([np.nan]), np.array([np.inf, -np.inf]), np.zeros(5),
                    np.array([-0.0, 2.0, 0.0]), rng.standard_normal(stats.BATCHED_SIZE + 1)]


def test_small_host_arrays_wait_for_the_fetch_and_give_numpys_figures():
    readings = Readings()
    cases = arrays()
    found = [(stats.value_stats_later(a, readings, CPU), stats.grad_stats_later(a, readings, CPU))
             for a in cases]
    assert [values == {} for values, _ in found[:-1]] == [True] * (len(cases) - 1)  # batched
    assert found[-1][0] != {}  # bigger than BATCHED_SIZE: taken at once
    readings.fetch()
    for array, (values, grads) in zip(cases, found):
        assert_figures(values, reference_values(array))
        assert_figures(grads, reference_grads(array))


def test_the_figures_are_of_the_array_as_it_was_handed_over():
    readings = Readings()
    array = np.array([1.0, 2.0, 3.0])
    values = stats.value_stats_later(array, readings, CPU)
    array *= 100  # an in-place op on the output before the backward call ends
    readings.fetch()
    assert values["max"] == 3.0 and values["mean"] == 2.0


def test_a_full_batch_is_finished_without_waiting_for_the_fetch(monkeypatch):
    monkeypatch.setattr(stats, "_BATCH_ENTRIES", 10)
    readings = Readings()
    first = stats.value_stats_later(np.ones(6), readings, CPU)
    second = stats.value_stats_later(np.ones(6), readings, CPU)
    assert first["mean"] == 1.0 and second["mean"] == 1.0
    third = stats.value_stats_later(np.ones(2), readings, CPU)
    assert third == {}
    readings.fetch()
    assert third["max"] == 1.0


def test_batches_filled_from_several_threads_all_get_their_figures():
    readings = Readings()
    found = [[] for _ in range(4)]

    def hand_over(results, offset):
        for index in range(500):
            results.append((offset + index,
                            stats.grad_stats_later(np.full(3, offset + index, np.float32), readings, CPU)))

    threads = [threading.Thread(target=hand_over, args=(found[number], 1000 * number))
               for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    readings.fetch()
    for results in found:
        for value, grads in results:
            assert grads["max_abs"] == value and grads["norm"] == pytest.approx(value * math.sqrt(3))


def test_value_stats_and_grad_stats_fetch_at_once():
    assert stats.value_stats(np.array([1.0, -3.0, np.nan])) == {
        "min": -3.0, "max": 1.0, "mean": -1.0, "abs_mean": 2.0, "nan": 1, "inf": 0}
    assert stats.grad_stats(np.zeros((2, 2), np.float32))["zero_fraction"] == 1.0


def test_a_recorded_step_has_every_statistic_filled():
    w = genesis.randn(8, requires_grad=True)
    with genesis.debug.record() as recording:
        y = w
        for _ in range(50):
            y = (y * 0.9).tanh()
        y.sum().backward()
    graph, = recording.graphs
    ops = graph.of_kind("op")
    assert len(ops) == 101
    for node in ops:
        assert list(node.outputs[0].stats) == list(stats.VALUE_KEYS)
        assert list(node.outputs[0].grad) == list(stats.GRAD_KEYS)


def test_batched_statistics_are_compact_read_only_rows_of_their_batch():
    """A batched array's statistics are a `BatchedStats` row: a mapping equal to the dict
    of the same figures, with integer counts and None where no entry is finite, empty until
    the fetch; rows of many batches read in any order give their own figures."""
    rng = np.random.default_rng(1)
    readings = Readings()
    arrays = [rng.standard_normal(5) for _ in range(7)] + [np.array([np.nan, np.inf])]
    values = [stats.value_stats_later(array, readings, CPU) for array in arrays]
    grads = [stats.grad_stats_later(array, readings, CPU) for array in arrays]
    assert isinstance(values[0], stats.BatchedStats) and len(values[0]) == 0 and dict(values[0]) == {}
    readings.fetch()
    for array, found_values, found_grads in zip(arrays, values, grads):
        assert_figures(found_values, reference_values(array))
        assert_figures(found_grads, reference_grads(array))
        assert type(found_values["nan"]) is int and type(found_grads["inf"]) is int
    assert values[-1]["min"] is None and grads[-1]["norm"] is None and grads[-1]["zero_fraction"] == 0.0
    assert values[1] == dict(values[1].items()) and values[1] != dict(grads[1].items())
    assert values[0].values_if_keys(stats.VALUE_KEYS) == list(values[0].values())
    assert values[0].values_if_keys(stats.GRAD_KEYS) is None
    assert repr(values[-1]) == repr(reference_values(arrays[-1]))
    with pytest.raises(KeyError):
        values[0]["norm"]
    # more batches than the tables kept as lists, read across all of them, twice
    batches = []
    for number in range(stats._Table.KEPT_LISTED + 3):
        batch_readings = Readings()
        batches.append([(array, stats.value_stats_later(array, batch_readings, CPU))
                        for array in (np.full(3, float(number)), np.arange(4.0) * number)])
        batch_readings.fetch()
    for _ in range(2):
        for pairs in batches:
            for array, found in pairs:
                assert_figures(found, reference_values(array))


def test_rows_of_a_table_longer_than_a_listed_block_read_in_any_order():
    """A table lists its rows a block at a time (`_Table.LISTED_ROWS`): rows across blocks,
    read in order, backwards and by key, with arrays that have no finite entry among them."""
    rng = np.random.default_rng(2)
    readings = Readings()
    rows = 2 * stats._Table.LISTED_ROWS + 5
    arrays = [np.full(2, np.nan) if index % 97 == 3 else rng.standard_normal(3)
              for index in range(rows)]
    values = [stats.value_stats_later(array, readings, CPU) for array in arrays]
    grads = [stats.grad_stats_later(array, readings, CPU) for array in arrays]
    readings.fetch()
    assert len({id(found._pending.table) for found in values}) == 1  # one table
    for index in [*range(rows), *reversed(range(rows))]:
        assert_figures(values[index], reference_values(arrays[index]))
        assert_figures(grads[index], reference_grads(arrays[index]))
    for index in range(0, rows, 7):  # single reads, inside and outside the listed block
        assert_figures({key: values[index][key] for key in stats.VALUE_KEYS},
                       reference_values(arrays[index]))
        assert values[index].values() == [values[index][key] for key in stats.VALUE_KEYS]
