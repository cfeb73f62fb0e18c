"""Summary statistics of a tensor's values and of its gradient, as plain floats.

The figures cover the finite entries; `nan` and `inf` count the others, so a
statistic is always a finite float (or None when no entry is finite) and a
Graph stays strict JSON.

On the CPU the figures of the whole array are taken first and, only when some
entry is NaN or Inf, again over the finite ones. On a GPU every figure is taken
over the finite entries in one pass (`_finite_figures`), so no host decision is
needed in between, and the figures wait on the device: `value_stats_later` and
`grad_stats_later` hand them to a `Readings` and return a dict that is filled
when it fetches (the recorder fetches once per backward call, not once per
tensor). `value_stats` and `grad_stats` fetch at once and give dicts.

Small host arrays (up to `BATCHED_SIZE` entries, most op outputs of a long chain
of small tensors) wait too: a copy of each joins a batch whose figures are taken
together, a few NumPy reductions over all of them, when the `Readings` fetches.
A dozen reductions of one tiny array cost more than the op that made it; the
batch makes it about a microsecond. Their statistics are read-only mappings
(`BatchedStats`), rows of a table per batch, empty until it is flushed.

>>> import numpy as np
>>> value_stats(np.array([1.0, -3.0, float("nan")]))
{'min': -3.0, 'max': 1.0, 'mean': -1.0, 'abs_mean': 2.0, 'nan': 1, 'inf': 0}
>>> grad_stats(np.array([3.0, 4.0, 0.0]))
{'norm': 5.0, 'max_abs': 4.0, 'nan': 0, 'inf': 0, 'zero_fraction': 0.3333333333333333}
"""
from __future__ import annotations

import math
import threading
import weakref
from collections import deque
from collections.abc import Mapping

import numpy as np

from ..device import device, namespace_of
from . import _finite_figures as figures
from .readings import Readings

__all__ = ["value_stats", "grad_stats", "value_stats_later", "grad_stats_later", "BatchedStats",
           "VALUE_KEYS", "GRAD_KEYS"]

VALUE_KEYS = ("min", "max", "mean", "abs_mean", "nan", "inf")    # value statistics, in order
GRAD_KEYS = ("norm", "max_abs", "nan", "inf", "zero_fraction")  # gradient statistics, in order
COUNT_KEYS = frozenset(("nan", "inf"))  # the statistics that count entries (integers)
# the statistics of the finite entries: None where an array has none
OF_FINITE_KEYS = frozenset(("min", "max", "mean", "abs_mean", "norm", "max_abs"))

# Sums over arrays holding inf and -inf are nan, and say so; the finite part is taken next.
_quietly = np.errstate(invalid="ignore", over="ignore")
_VALUE_FIGURES = (figures.FINITE_MIN, figures.FINITE_MAX, figures.FINITE_SUM,
                  figures.FINITE_ABS_SUM, figures.FINITE_COUNT, figures.NAN_COUNT)
_GRAD_FIGURES = (figures.FINITE_SQUARE_SUM, figures.FINITE_MAX_ABS, figures.FINITE_COUNT,
                 figures.NAN_COUNT, figures.NONZERO_COUNT)
BATCHED_SIZE = 1024       # host arrays with at most this many entries are batched
_BATCH_ENTRIES = 1 << 18  # a batch holding this many entries is finished at once


def value_stats(array) -> dict:
    """min, max, mean and mean absolute value of the finite entries; NaN and Inf counts."""
    return _now(value_stats_later, array)


def grad_stats(array) -> dict:
    """L2 norm and largest magnitude of the finite entries, NaN/Inf counts, fraction of zeros."""
    return _now(grad_stats_later, array)


def _now(later, array) -> dict:
    readings = Readings()
    stats = later(array, readings, _device_of(array))
    readings.fetch()
    return dict(stats.items())


def value_stats_later(array, readings: Readings, device) -> Mapping:
    """`value_stats(array)` (`device`: the array's genesis device), filled when `readings`
    fetches; at once for a NumPy array that is empty, not floating or bigger than
    `BATCHED_SIZE` entries."""
    if _batched(array, device):
        return _batches_of(readings)[0].add(array)
    return _later(array, readings, device, _host_value_stats, _VALUE_FIGURES, _values_from,
                  _values_of(None, 0, 0))


def grad_stats_later(array, readings: Readings, device) -> Mapping:
    """`grad_stats(array)`, filled as `value_stats_later` fills its figures."""
    if _batched(array, device):
        return _batches_of(readings)[1].add(array)
    return _later(array, readings, device, _host_grad_stats, _GRAD_FIGURES, _grads_from,
                  {"norm": None, "max_abs": None, "nan": 0, "inf": 0, "zero_fraction": 0.0})


def _later(array, readings: Readings, device, on_host, device_figures, from_figures,
           of_nothing: dict) -> dict:
    """Statistics of `array`: `on_host(array)` for NumPy; for a GPU, a dict that
    `from_figures(size, *values of device_figures)` fills when `readings` fetches."""
    size = array.size
    if size == 0:
        return of_nothing
    xp = device.xp
    array = _comparable(xp, array)
    if xp is np:
        return on_host(array)
    stats = {}
    readings.read(xp, [figure(device, array) for figure in device_figures],
                  lambda found: stats.update(from_figures(size, *found)))
    return stats


def _values_from(size, low, high, total, abs_total, count, nan) -> dict:
    """The value statistics from the finite-entry figures."""
    count, nan = int(count), int(nan)
    found = (low, high, total / count, abs_total / count) if count else None
    return _values_of(found, nan, size - count - nan)


def _grads_from(size, squares, max_abs, count, nan, nonzero) -> dict:
    """The gradient statistics from the finite-entry figures."""
    count, nan = int(count), int(nan)
    return {"norm": math.sqrt(squares) if count else None, "max_abs": max_abs if count else None,
            "nan": nan, "inf": size - count - nan, "zero_fraction": (size - int(nonzero)) / size}


@_quietly
def _host_value_stats(array) -> dict:
    size = array.size
    magnitudes = _magnitudes(array)
    low, high, total, abs_total = _floats(array.min(), array.max(),
                                           array.sum(dtype=np.float64),
                                           magnitudes.sum(dtype=np.float64))
    if _all_finite(low, high, total, abs_total):
        return _values_of((low, high, total / size, abs_total / size), 0, 0)
    finite = np.isfinite(array)
    low, high, total, abs_total, count, nan = _floats(
        np.where(finite, array, np.inf).min(), np.where(finite, array, -np.inf).max(),
        np.where(finite, array, 0).sum(dtype=np.float64),
        np.where(finite, magnitudes, 0).sum(dtype=np.float64),
        np.count_nonzero(finite), np.count_nonzero(np.isnan(array)))
    return _values_from(size, low, high, total, abs_total, count, nan)


@_quietly
def _host_grad_stats(array) -> dict:
    size = array.size
    wide = array.reshape(-1).astype(np.float64, copy=False)
    magnitudes = _magnitudes(array)
    squares, max_abs, nonzero = _floats(np.dot(wide, wide), magnitudes.max(),
                                         np.count_nonzero(array))
    if _all_finite(squares, max_abs):
        return _grads_from(size, squares, max_abs, size, 0, nonzero)
    finite = np.isfinite(array)
    kept = np.where(finite.reshape(-1), wide, 0)
    squares, max_abs, count, nan = _floats(
        np.dot(kept, kept), np.where(finite, magnitudes, -1).max(),
        np.count_nonzero(finite), np.count_nonzero(np.isnan(array)))
    return _grads_from(size, squares, max_abs, count, nan, nonzero)


def _batched(array, device) -> bool:
    """Whether the statistics of `array` wait in a host batch: small, floating, NumPy."""
    return 0 < array.size <= BATCHED_SIZE and array.dtype.kind == "f" and device.xp is np


class _HostBatch:
    """Copies of small host arrays waiting for their statistics, taken for all of them at
    once by `flush`: `columns(flat, starts, sizes)` reduces the arrays laid end to end in
    `flat` and gives one column per statistic, `keys` in order. Each array's statistics
    are a `BatchedStats` row of the `_Table` its flush makes."""

    def __init__(self, columns, keys: tuple):
        self._columns, self._keys = columns, keys
        self._lock = threading.Lock()  # backward calls on several threads add here
        self._arrays = []              # flat copies, in the order added
        self._table = _Pending()       # what the rows of those copies will read
        self._entries = 0

    def add(self, array) -> BatchedStats:
        copy = array.reshape(-1).copy()  # the array may be changed in place before the flush
        with self._lock:
            stats = BatchedStats(self._table, len(self._arrays))
            self._arrays.append(copy)
            self._entries += copy.size
            full = self._entries >= _BATCH_ENTRIES
        if full:
            self.flush()
        return stats

    def flush(self) -> None:
        if not self._arrays:
            return  # (read without the lock: an array added meanwhile waits for the next flush)
        with self._lock:
            arrays, pending = self._arrays, self._table
            self._arrays, self._table, self._entries = [], _Pending(), 0
        if arrays:
            pending.table = self._reduce(arrays)

    @_quietly
    def _reduce(self, arrays: list) -> "_Table":
        sizes = np.fromiter(map(len, arrays), np.intp, len(arrays))
        starts = np.zeros(len(arrays), np.intp)
        np.cumsum(sizes[:-1], out=starts[1:])
        columns, counts = self._columns(np.concatenate(arrays, dtype=np.float64), starts, sizes)
        return _Table(self._keys, columns, counts)


class _Pending:
    """The table a batch's rows read, set when the batch is flushed (None until then)."""

    __slots__ = ("table",)

    def __init__(self):
        self.table = None


class _Table:
    """The statistics of one flushed batch: a row per array, a column per key. Columns of
    counts (`COUNT_KEYS`) hold integers, the others floats; those of the finite entries
    (`OF_FINITE_KEYS`) are None where an array had no finite entry (its count is 0).

    Rows are read one by one (a trace written goes through all of them in order, the
    values and the gradients of each node, from two tables at a time): a table lists its
    rows as Python lists `LISTED_ROWS` at a time, the block being read, and only the
    `KEPT_LISTED` tables read last keep theirs. (Listing a whole table, 16,384 rows of a
    long chain's small arrays, held 3.5 MB of lists a table, 14 MB at the peak of a trace.)"""

    __slots__ = ("keys", "positions", "rows", "counts", "integers", "of_finite", "empty",
                 "_lists", "_listed_from")
    KEPT_LISTED = 4
    LISTED_ROWS = 1024
    _listed_recently = deque()  # the tables keeping a block of rows as lists, oldest first

    def __init__(self, keys: tuple, columns: list, counts):
        self.keys = keys
        self.positions = {key: position for position, key in enumerate(keys)}
        self.rows = np.stack(columns, axis=1).astype(np.float64, copy=False)
        # the counts also as lists of ints (mostly 0: small ints cost a pointer), read fast
        # by the NaN/Inf checks of drawings and findings
        self.counts = {key: column.tolist() for key, column in zip(keys, columns) if key in COUNT_KEYS}
        self.integers = tuple(position for position, key in enumerate(keys) if key in COUNT_KEYS)
        self.of_finite = tuple(position for position, key in enumerate(keys) if key in OF_FINITE_KEYS)
        self.empty = frozenset(np.flatnonzero(counts == 0).tolist())
        self._lists = None       # rows _listed_from, _listed_from + LISTED_ROWS, ... as lists
        self._listed_from = 0

    def value(self, row: int, key: str):
        """One statistic of one row (KeyError for a key the table does not have)."""
        counts = self.counts.get(key)
        if counts is not None:
            return counts[row]
        position = self.positions[key]
        lists = self._lists
        if lists is not None and 0 <= row - self._listed_from < len(lists):
            return lists[row - self._listed_from][position]
        value = self.rows.item(row, position)
        if self.empty and position in self.of_finite and row in self.empty:
            return None
        return value

    def values(self, row: int) -> list:
        lists = self._lists
        if lists is None or not 0 <= row - self._listed_from < len(lists):
            lists = self._listed(row - row % self.LISTED_ROWS)
        return list(lists[row - self._listed_from])

    def _listed(self, start: int) -> list:
        """Rows `start` to `start + LISTED_ROWS` as lists, kept until another block is read."""
        recent = _Table._listed_recently
        if self._lists is None:
            if len(recent) >= self.KEPT_LISTED:
                recent.popleft()._lists = None
            recent.append(self)
        end = start + self.LISTED_ROWS
        lists = self.rows[start:end].tolist()
        for position in self.integers:
            for values, count in zip(lists, self.counts[self.keys[position]][start:end]):
                values[position] = count
        if self.empty:
            for offset, values in enumerate(lists):
                if start + offset in self.empty:
                    for position in self.of_finite:
                        values[position] = None
        self._lists, self._listed_from = lists, start
        return lists


class BatchedStats(Mapping):
    """One array's statistics from a host batch: a read-only mapping with the keys and values
    of the dict `value_stats` or `grad_stats` gives, read from its batch's table (96 bytes
    where the dict and its floats took about 280: a long recorded chain has a pair per op).
    Empty until the batch is flushed, as the dict was until it was filled.

    >>> readings = Readings()
    >>> stats = value_stats_later(np.array([1.0, -3.0]), readings, device("cpu"))
    >>> len(stats)
    0
    >>> readings.fetch()
    >>> stats["min"], stats == {"min": -3.0, "max": 1.0, "mean": -1.0, "abs_mean": 2.0, "nan": 0, "inf": 0}
    (-3.0, True)
    """

    __slots__ = ("_pending", "_row")

    def __init__(self, pending: _Pending, row: int):
        self._pending, self._row = pending, row

    def __getitem__(self, key):
        table = self._pending.table
        if table is None:
            raise KeyError(key)
        counts = table.counts.get(key)  # (the NaN/Inf checks' reads, inline)
        return counts[self._row] if counts is not None else table.value(self._row, key)

    def __iter__(self):
        table = self._pending.table
        return iter(() if table is None else table.keys)

    def __len__(self) -> int:
        table = self._pending.table
        return 0 if table is None else len(table.keys)

    def values(self) -> list:
        """The values in key order, as a list (one read of the table's row)."""
        table = self._pending.table
        return [] if table is None else table.values(self._row)

    def values_if_keys(self, keys: tuple) -> list | None:
        """`values()` when the keys are `keys` in that order (the usual statistics), else None."""
        table = self._pending.table
        return table.values(self._row) if table is not None and table.keys == keys else None

    def items(self) -> list:
        table = self._pending.table
        return [] if table is None else list(zip(table.keys, table.values(self._row)))

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def _value_columns(flat, starts, sizes) -> tuple:
    """(min, max, mean, abs_mean, nan, inf of each array laid end to end in `flat`, the
    count of each one's finite entries)."""
    finite = np.isfinite(flat)
    if finite.all():
        count, nan, kept = sizes, np.zeros_like(sizes), flat
        low, high = np.minimum.reduceat(flat, starts), np.maximum.reduceat(flat, starts)
    else:
        count = np.add.reduceat(finite.astype(np.intp), starts)
        nan = np.add.reduceat(np.isnan(flat).astype(np.intp), starts)
        low = np.minimum.reduceat(np.where(finite, flat, np.inf), starts)
        high = np.maximum.reduceat(np.where(finite, flat, -np.inf), starts)
        kept = np.where(finite, flat, 0.0)
    return [low, high, np.add.reduceat(kept, starts) / count,
            np.add.reduceat(np.abs(kept), starts) / count, nan, sizes - count - nan], count


def _grad_columns(flat, starts, sizes) -> tuple:
    """(norm, max_abs, nan, inf, zero_fraction of each array laid end to end in `flat`, the
    count of each one's finite entries)."""
    finite = np.isfinite(flat)
    zero_fraction = (sizes - np.add.reduceat((flat != 0).astype(np.intp), starts)) / sizes
    if finite.all():
        count = sizes
        nan = np.zeros_like(sizes)
    else:
        count = np.add.reduceat(finite.astype(np.intp), starts)
        nan = np.add.reduceat(np.isnan(flat).astype(np.intp), starts)
        flat = np.where(finite, flat, 0.0)
    norm = np.sqrt(np.add.reduceat(flat * flat, starts))
    max_abs = np.maximum.reduceat(np.abs(flat), starts)
    return [norm, max_abs, nan, sizes - count - nan, zero_fraction], count


_BATCHES = {}  # id(Readings) -> (its value batch, its gradient batch), while it lives


def _batches_of(readings: Readings) -> tuple:
    batches = _BATCHES.get(id(readings))
    if batches is None:
        batches = _BATCHES[id(readings)] = (_HostBatch(_value_columns, VALUE_KEYS),
                                            _HostBatch(_grad_columns, GRAD_KEYS))
        for batch in batches:
            readings.on_fetch(batch.flush)
        weakref.finalize(readings, _BATCHES.pop, id(readings), None)
    return batches


def _device_of(array):
    """The genesis device an array lives on."""
    if namespace_of(array) is np:
        return device("cpu")
    return device(f"cuda:{array.device.id}")


def _values_of(figures, nan: int, inf: int) -> dict:
    low, high, mean, abs_mean = figures if figures is not None else (None,) * 4
    return {"min": low, "max": high, "mean": mean, "abs_mean": abs_mean, "nan": nan, "inf": inf}


def _comparable(xp, array):
    """Arrays NumPy can reduce directly; bfloat16 (an extension dtype) is widened to float32."""
    return array.astype(xp.float32) if array.dtype.kind == "V" else array


def _magnitudes(array):
    return np.abs(array) if array.dtype.kind in "fi" else array


def _floats(*figures) -> list:
    return [float(figure) for figure in figures]


def _all_finite(*figures) -> bool:
    return all(math.isfinite(figure) for figure in figures)
