"""`genesis.cuda`: the GPUs CuPy sees, their memory, and their random generators.

Where PyTorch's `torch.cuda` answers on a machine without a GPU, so does this
module (`is_available()` is False, `device_count()` and the memory figures 0,
seeds are kept); `current_device`, `get_device_name` and `synchronize` raise
`genesis.DeviceError` saying what is missing (CuPy, or a GPU). Under the test-only switch
`GENESIS_FAKE_CUDA=1` the "cuda" device is NumPy in disguise: one GPU, no
memory in use, synchronisation a no-op.

`set_device(n)` (or `with genesis.cuda.device(n):`) makes GPU n the current one on this
thread: a bare "cuda" then means "cuda:n", and CuPy launches its work there, as
PyTorch's current device does. Tensors live on the current GPU: using another one is an
error that says to call `set_device` (one process per GPU, as with DDP), where PyTorch
would switch GPUs op by op.

Memory figures come from CuPy's default memory pool, which every CuPy array of
genesis is allocated from: `memory_allocated` is the pool's bytes in use,
`memory_reserved` the bytes it holds from the driver (in use or cached).

>>> import genesis
>>> device = "cuda" if genesis.cuda.is_available() else "cpu"
>>> x = genesis.randn(256, 256, device=device)
>>> y = (x @ x).relu()
>>> genesis.cuda.synchronize() if device == "cuda" else None
>>> genesis.cuda.memory_allocated() >= 0
True
"""
from __future__ import annotations

from dataclasses import dataclass

from .device import DeviceError, cupy_runtime, current_gpu, device as as_device, fake_cuda_count
from .random import seed_device, seed_device_type

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "get_device_name", "get_device_properties", "synchronize", "manual_seed",
           "manual_seed_all", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]

FAKE_DEVICE_NAME = "genesis fake CUDA device (NumPy)"


def is_available() -> bool:
    """Whether a CUDA device can be used (CuPy importable and at least one GPU). Never raises."""
    return device_count() > 0


def device_count() -> int:
    """The number of GPUs CuPy sees; 0 without CuPy or a driver. Never raises."""
    fake = fake_cuda_count()
    if fake:
        return fake
    try:
        return cupy_runtime()[1]
    except DeviceError:
        return 0


def current_device() -> int:
    """The index of the current GPU: the one a bare "cuda" means and CuPy launches work on."""
    if not fake_cuda_count():
        cupy_runtime()  # says what is missing on a machine without a usable GPU
    return current_gpu.index


def set_device(device) -> None:
    """Make `device` (an int, "cuda:N" or a Device) the current GPU of this thread.

    >>> import genesis
    >>> if genesis.cuda.is_available():
    ...     genesis.cuda.set_device(0)
    """
    index = _index(device)
    if not fake_cuda_count():
        cupy, count = cupy_runtime()
        if index >= count:
            raise DeviceError(f"cuda:{index} was requested but this machine has {count} GPU(s)")
        cupy.cuda.Device(index).use()
    current_gpu.index = index


class device:
    """Context manager: GPU `index` is the current one inside the block, the previous one after.

    >>> import genesis
    >>> if genesis.cuda.is_available():
    ...     with genesis.cuda.device(0):
    ...         x = genesis.zeros(2, device="cuda")
    """

    def __init__(self, index):
        self.index = index
        self._previous = None

    def __enter__(self) -> "device":
        self._previous = current_gpu.index
        set_device(self.index)
        return self

    def __exit__(self, *exc_info) -> None:
        set_device(self._previous)


@dataclass(frozen=True)
class DeviceProperties:
    """What `get_device_properties` reports about a GPU (PyTorch's field names)."""

    name: str
    major: int
    minor: int
    total_memory: int            # bytes
    multi_processor_count: int

    def __repr__(self) -> str:
        return (f"DeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> DeviceProperties:
    """The GPU's name, compute capability (major.minor), memory and multiprocessor count
    (zeros for the fake GPU of the tests)."""
    index = _index(device)
    if fake_cuda_count():
        return DeviceProperties(FAKE_DEVICE_NAME, 0, 0, 0, 0)
    cupy, _ = cupy_runtime()
    properties = cupy.cuda.runtime.getDeviceProperties(index)
    name = properties["name"]
    return DeviceProperties(name.decode() if isinstance(name, bytes) else name,
                            properties["major"], properties["minor"],
                            properties["totalGlobalMem"], properties["multiProcessorCount"])


def get_device_name(device=None) -> str:
    """The GPU's product name, e.g. "NVIDIA H100 80GB HBM3"."""
    index = _index(device)
    if fake_cuda_count():
        return FAKE_DEVICE_NAME
    cupy, _ = cupy_runtime()
    name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None) -> None:
    """Wait until every kernel queued on the GPU has finished (do this before reading a
    timer: kernels run asynchronously)."""
    index = _index(device)
    if fake_cuda_count():
        return
    cupy, _ = cupy_runtime()
    cupy.cuda.Device(index).synchronize()


def manual_seed(seed: int) -> None:
    """Seed the current GPU's random generator (the CPU's and other GPUs' stay as they are).

    Without a GPU the seed is kept for when one is used, as in PyTorch.
    """
    seed_device(as_device(f"cuda:{_index(None)}"), seed)


def manual_seed_all(seed: int) -> None:
    """Seed the random generators of every GPU."""
    seed_device_type("cuda", seed)


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by live arrays (tensors, saved tensors, optimizer state);
    0 where no real GPU is in use."""
    index = _index(device)
    if not _real_gpus():
        return 0
    return _peaks.observe(index, _used_bytes(index))


def memory_reserved(device=None) -> int:
    """Bytes CuPy's pool holds from the driver: in use plus cached for reuse."""
    index = _index(device)
    if not _real_gpus():
        return 0
    pool = _pool()
    with _cupy().cuda.Device(index):
        return pool.total_bytes()


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` since `reset_peak_memory_stats()`.

    CuPy's pool keeps no peak, so `reset_peak_memory_stats()` starts a small
    memory hook (a Python call per allocation, on the calling thread) that keeps
    one. Before the first reset, the figure is only the largest value that
    `memory_allocated()`/`max_memory_allocated()` have seen when called.
    """
    index = _index(device)
    if not _real_gpus():
        return 0
    return max(_peaks.observe(index, _used_bytes(index)), _peaks.peak(index))


def reset_peak_memory_stats(device=None) -> None:
    """Restart the peak from the memory in use now, and track it on every allocation from now on."""
    index = _index(device)
    if not _real_gpus():
        return
    _peaks.start_tracking()
    _peaks.reset(index, _used_bytes(index))


def empty_cache() -> None:
    """Give the pool's cached, unused blocks back to the driver (live tensors are untouched)."""
    if _real_gpus():
        _pool().free_all_blocks()


def _real_gpus() -> bool:
    """Whether CuPy and a GPU are in use (not faked, not missing)."""
    return not fake_cuda_count() and device_count() > 0


def _index(device) -> int:
    """The GPU number of `device`: None means the current GPU; an int, "cuda:N" or a Device."""
    if device is None:
        return current_gpu.index
    if isinstance(device, int):
        index = device
    else:
        parsed = as_device(device)
        if parsed.type != "cuda":
            raise ValueError(f"expected a CUDA device, got {parsed}")
        index = parsed.index or 0
    fake = fake_cuda_count()
    if fake and index >= fake:
        raise DeviceError(f"cuda:{index} was requested but GENESIS_FAKE_CUDA provides {fake} "
                          "fake GPU(s)")
    return index


def _cupy():
    return cupy_runtime()[0]


def _pool():
    return _cupy().get_default_memory_pool()


def _used_bytes(index: int) -> int:
    pool = _pool()
    with _cupy().cuda.Device(index):
        return pool.used_bytes()


class _PeakTracker:
    """Peak bytes in use per GPU: sampled on each query, and on every allocation once
    `start_tracking` has installed a CuPy memory hook."""

    def __init__(self):
        self._peaks = {}
        self._hook = None

    def observe(self, index: int, used: int) -> int:
        if used > self._peaks.get(index, 0):
            self._peaks[index] = used
        return used

    def peak(self, index: int) -> int:
        return self._peaks.get(index, 0)

    def reset(self, index: int, used: int) -> None:
        self._peaks[index] = used

    def start_tracking(self) -> None:
        if self._hook is None:
            self._hook = _peak_hook(self)
            self._hook.__enter__()


def _peak_hook(tracker: _PeakTracker):
    """A CuPy MemoryHook noting the pool's bytes in use after each allocation."""
    cupy = _cupy()
    pool = cupy.get_default_memory_pool()

    class PeakHook(cupy.cuda.MemoryHook):
        name = "genesis_peak_memory"

        def malloc_postprocess(self, device_id, **details):
            tracker.observe(device_id, pool.used_bytes())

    return PeakHook()


_peaks = _PeakTracker()
