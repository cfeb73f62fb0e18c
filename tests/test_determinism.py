"""use_deterministic_algorithms: nothing changes on the CPU; on a GPU, adding into repeated
positions (atomic additions) is refused, or warned about with warn_only, while adding into
distinct positions (deterministic) goes ahead."""
import numpy as np
import pytest

import genesis
from genesis.ops import _scatter


class FakeDeviceArrays:
    """Stands for CuPy in add_at: index arrays that must be fetched with .get()."""

    class add:
        @staticmethod
        def at(target, index, values):
            np.add.at(target, index.array if isinstance(index, Fetched) else index, values)


class Fetched:
    def __init__(self, array):
        self.array = array
        self.ndim, self.shape = array.ndim, array.shape

    def get(self):
        return self.array


@pytest.fixture
def deterministic():
    genesis.use_deterministic_algorithms(True)
    yield
    genesis.use_deterministic_algorithms(False)


def test_cpu_training_runs_unchanged(deterministic):
    x = genesis.randn(5, 3, requires_grad=True)
    x[genesis.tensor([0, 0, 2])].sum().backward()  # repeated rows: np.add.at, deterministic
    assert x.grad[0].tolist() == [2.0, 2.0, 2.0]
    assert genesis.are_deterministic_algorithms_enabled()


def test_repeated_positions_on_a_gpu_are_refused_or_warned(deterministic, monkeypatch):
    monkeypatch.setattr(_scatter, "_cupy_add_at", {id(FakeDeviceArrays): FakeDeviceArrays.add.at})
    target = np.zeros(4)
    with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
        _scatter.add_at(FakeDeviceArrays, target, Fetched(np.array([1, 1])), np.ones(2))
    _scatter.add_at(FakeDeviceArrays, target, Fetched(np.array([0, 3])), np.ones(2))  # distinct
    assert target.tolist() == [1.0, 0.0, 0.0, 1.0]
    genesis.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="deterministic"):
        _scatter.add_at(FakeDeviceArrays, target, Fetched(np.array([2, 2])), np.ones(2))
    assert target[2] == 2.0 and genesis.is_deterministic_algorithms_warn_only_enabled()


def test_the_switch_is_off_by_default_and_takes_a_bool():
    assert not genesis.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="expects a bool"):
        genesis.use_deterministic_algorithms("yes")
