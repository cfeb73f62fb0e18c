"""Readings on a device namespace: figures wait until fetch(), which brings them over in one
transfer and passes them on in the order read, whether they are slots of the shared zeroed
buffers (the kernels' sums), slots of a buffer that ran out (a second one), or other arrays."""
import types

import numpy as np

from genesis.debug import readings as readings_module
from genesis.debug.readings import Readings


def _device_namespace(transfers: list):
    """NumPy under another name (Readings passes NumPy values on at once), counting the
    arrays its `tolist` crossings bring over."""
    class DeviceArray(np.ndarray):
        def tolist(self):
            transfers.append(self.size)
            return np.asarray(self).tolist()

    def as_device(array):
        return np.asarray(array).view(DeviceArray)
    return types.SimpleNamespace(
        float64=np.float64, __name__="device",
        zeros=lambda count, dtype: as_device(np.zeros(count, dtype)),
        asarray=lambda value, dtype=None: as_device(np.asarray(value, dtype)),
        concatenate=lambda pieces: as_device(np.concatenate(pieces)),
        as_device=as_device)


def test_slots_and_other_figures_come_back_in_the_order_read_in_one_transfer(monkeypatch):
    monkeypatch.setattr(readings_module, "_SCRATCH", 4)  # a second buffer after four slots
    transfers = []
    xp = _device_namespace(transfers)
    readings, seen = Readings(), []
    first = readings.zeroed(xp, 3)
    first += [1, 2, 3]  # a kernel adding its sums into the slots
    readings.read(xp, [first], lambda values: seen.append(("first", values)))
    readings.read(xp, [xp.asarray(7, dtype=np.int64), xp.asarray([8.5, 9.5])],
                  lambda values: seen.append(("others", values)))
    second = readings.zeroed(xp, 2)  # does not fit the first buffer: a new one
    second += [4, 5]
    third = readings.zeroed(xp, 1)
    third += 6
    readings.read(xp, [third, second], lambda values: seen.append(("last", values)))
    assert seen == [] and len(readings) == 3
    readings.fetch()
    assert seen == [("first", [1.0, 2.0, 3.0]), ("others", [7.0, 8.5, 9.5]),
                    ("last", [6.0, 4.0, 5.0])]
    assert len(transfers) == 1 and readings.transfers == 1
    assert transfers == [3 + 3 + 3]  # the used parts of both buffers, then the others


def test_a_fetch_of_slots_alone_copies_the_buffer_without_joining_pieces():
    transfers = []
    xp = _device_namespace(transfers)
    joined = []
    concatenate = xp.concatenate
    xp.concatenate = lambda pieces: joined.append(len(pieces)) or concatenate(pieces)
    readings, seen = Readings(), []
    for value in (1.0, 2.0, 3.0):
        slot = readings.zeroed(xp, 2)
        slot += value
        readings.read(xp, [slot], seen.append)
    readings.fetch()
    assert seen == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert joined == [] and transfers == [6]


def test_slots_handed_out_after_a_fetch_start_a_fresh_buffer():
    transfers = []
    xp = _device_namespace(transfers)
    readings, seen = Readings(), []
    slot = readings.zeroed(xp, 1)
    slot += 5
    readings.read(xp, [slot], seen.append)
    readings.fetch()
    again = readings.zeroed(xp, 1)
    assert float(again[0]) == 0.0 and again.base is not slot.base
    again += 2
    readings.read(xp, [again], seen.append)
    readings.fetch()
    assert seen == [[5.0], [2.0]]
