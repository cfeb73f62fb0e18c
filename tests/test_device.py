"""Devices: parsing, namespaces, and clear errors when CUDA is unavailable."""
import importlib.util

import numpy as np
import pytest

import genesis
from genesis.device import Device, DeviceError


def test_parse_devices():
    assert genesis.device("cpu") is genesis.device("cpu")
    assert genesis.device("cuda") == genesis.device("cuda:0")
    assert genesis.device("cuda:1").index == 1
    assert repr(genesis.device("cpu")) == "device(type='cpu')"
    assert str(genesis.device("cuda:2")) == "cuda:2"
    assert genesis.device("cpu") == "cpu"
    with pytest.raises(DeviceError, match="unknown device"):
        genesis.device("tpu")


def test_the_index_may_come_second_as_in_pytorch():
    assert genesis.device("cuda", 1) is genesis.device("cuda:1")
    assert genesis.device("CUDA", 0) is genesis.device("cuda:0")
    assert genesis.device("cpu", 0) is genesis.device("cpu")
    assert genesis.device("cpu:0") is genesis.device("cpu")  # was "unknown device 'cpu:0'"
    assert genesis.zeros(2).to("cpu:0").device == "cpu"
    with pytest.raises(DeviceError, match="unknown device 'cpu:1'"):
        genesis.device("cpu:1")
    for kind, index, problem in (("cuda:1", 1, "given twice"), ("tpu", 0, "must be 'cpu' or"),
                                 ("cuda", -1, "int >= 0"), ("cuda", 1.0, "int >= 0"),
                                 ("cuda", True, "int >= 0"), ("cpu", 1, "index 0 only")):
        with pytest.raises(DeviceError, match=problem):
            genesis.device(kind, index)


def test_cpu_namespace_is_numpy():
    assert genesis.device("cpu").xp is np


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_cuda_without_cupy_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GENESIS_FAKE_CUDA", raising=False)
    Device._cache.pop(("cuda", 7), None)
    with pytest.raises(DeviceError, match="CuPy"):
        genesis.zeros(2, device="cuda:7")
    with pytest.raises(DeviceError, match="CuPy"):
        genesis.tensor([1.0]).to("cuda:7")


def test_set_num_threads_sizes_the_blas_pool_and_refuses_nonsense():
    before = genesis.get_num_threads()
    try:
        genesis.set_num_threads(1)
        assert genesis.get_num_threads() == 1
    finally:
        genesis.set_num_threads(before)
    assert genesis.get_num_threads() == before
    with pytest.raises(RuntimeError, match="positive integer"):
        genesis.set_num_threads(0)
    genesis.set_num_interop_threads(3)
    assert genesis.get_num_interop_threads() == 3
