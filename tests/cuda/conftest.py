"""Device fixtures.

`fake_cuda` backs "cuda" with NumPy (`GENESIS_FAKE_CUDA`), so device plumbing is
tested on every run, CI included. `real_cuda` skips, saying why, unless CuPy and
a GPU are present. `cuda` runs a test on both (the real GPU only where there is one).
Each resets what the "cuda" devices resolved before (their namespace, their
random generators) and restores it afterwards, so fake and real runs can share
a process.
"""
import importlib.util
import pathlib
import sys

import pytest

from genesis import random as genesis_random
from genesis.device import Device, current_gpu


def gpu_missing_reason() -> str | None:
    """Why no real GPU test can run here, or None when one can."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed (real-GPU tests need cupy and an NVIDIA GPU)"
    import cupy

    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy's CUDARuntimeError when there is no driver
        return f"CuPy found no usable CUDA device ({error})"
    return None if count else "CuPy sees no CUDA device"


def _use_cuda(monkeypatch, fake_count: int | None):
    if fake_count:
        monkeypatch.setenv("GENESIS_FAKE_CUDA", str(fake_count))
    else:
        monkeypatch.delenv("GENESIS_FAKE_CUDA", raising=False)
    for device in list(Device._cache.values()):
        if device.type == "cuda":
            monkeypatch.setattr(device, "_xp", None)
    monkeypatch.setattr(current_gpu, "index", 0)  # set_device in a test stays in that test
    monkeypatch.setattr(genesis_random, "_generators", {})
    monkeypatch.setattr(genesis_random, "_device_seeds", {})
    known = set(Device._cache)
    yield "cuda"
    for key, device in Device._cache.items():
        if key not in known and device.type == "cuda":
            device._xp = None  # resolved under this fixture's switch: resolve again next time


@pytest.fixture
def fake_cuda(monkeypatch):
    """One fake GPU ("cuda" = "cuda:0", NumPy underneath); yields "cuda"."""
    yield from _use_cuda(monkeypatch, 1)


@pytest.fixture
def two_fake_gpus(monkeypatch):
    """Two fake GPUs, "cuda:0" and "cuda:1"."""
    yield from _use_cuda(monkeypatch, 2)


@pytest.fixture
def real_cuda(monkeypatch):
    """The real GPU through CuPy; skips with the reason where there is none."""
    reason = gpu_missing_reason()
    if reason is not None:
        pytest.skip(reason)
    yield from _use_cuda(monkeypatch, None)


# Decided once, at collection: without a GPU the real variants are not generated at all
# (rather than skipped a thousand times); `real_cuda` tests still skip with the reason.
VARIANTS = ["fake"] if gpu_missing_reason() is not None else ["fake", "real"]


@pytest.fixture(params=VARIANTS)
def cuda(request, monkeypatch):
    """"cuda", faked with NumPy, and on the real GPU too where there is one."""
    yield from _use_cuda(monkeypatch, 1 if request.param == "fake" else None)


BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def array_ops(fake_cuda, monkeypatch):
    """bench/array_ops.py as a module; the fake cupyx modules it installs are taken away
    afterwards."""
    monkeypatch.syspath_prepend(str(BENCH))
    fakes = ("cupyx", "cupyx.scipy", "cupyx.scipy.special")
    for name in fakes:  # a real CuPy's cupyx makes way for the fakes, and comes back after
        monkeypatch.delitem(sys.modules, name, raising=False)
    spec = importlib.util.spec_from_file_location("array_ops_under_test", BENCH / "array_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    for name in fakes:
        sys.modules.pop(name, None)
