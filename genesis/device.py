"""Devices and their array namespaces: NumPy for "cpu", CuPy for "cuda".

Each device resolves its namespace once; CuPy is imported only when a CUDA
device is actually used, and its absence is reported then, with the cause.

>>> import genesis
>>> genesis.device("cpu")
device(type='cpu')
>>> str(genesis.device("cuda:1"))
'cuda:1'
"""
from __future__ import annotations

import os
import threading
import weakref

import numpy as np

__all__ = ["Device", "device", "cpu", "DeviceError", "device_mismatch_message", "devices_agree",
           "set_default_device", "get_default_device"]


class DeviceError(RuntimeError):
    """A device was asked for that this machine cannot provide."""


class Device:
    """A compute device: `type` is "cpu" or "cuda", `index` the GPU number."""

    __slots__ = ("type", "index", "_xp", "_real_gpu")
    _cache: dict = {}

    def __new__(cls, type: str, index: int | None = None):
        key = (type, index)
        cached = cls._cache.get(key)
        if cached is not None:
            return cached
        self = object.__new__(cls)
        self.type, self.index, self._xp, self._real_gpu = type, index, None, False
        cls._cache[key] = self
        return self

    @property
    def xp(self):
        """The array namespace (module) that holds this device's arrays.

        CuPy works on the current GPU, so a real GPU other than the current one is refused
        (rather than its arrays silently landing on the current one): `set_device` first.
        """
        xp = self._xp
        if xp is None:
            xp = self._xp = np if self.type == "cpu" else _cuda_namespace(self.index or 0)
            self._real_gpu = xp is not np
        if self._real_gpu and self.index != current_gpu.index:
            raise DeviceError(
                f"{self} is not the current GPU (cuda:{current_gpu.index}): genesis runs CuPy "
                f"on the current GPU; call genesis.cuda.set_device({self.index}) first (one "
                "process per GPU, as with DDP), or choose the GPU with CUDA_VISIBLE_DEVICES")
        return xp

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, Device) and self.type == other.type and self.index == other.index

    # Each device is made once (`_cache`): equal devices are one object, so their identity
    # hashes them, without a Python call (every op's metadata is hashed: `function.shared`)
    __hash__ = object.__hash__

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self) -> "Device":
        """`with genesis.device("cuda"):` makes this the default device inside the block."""
        default_device.entered.append(default_device.device)
        default_device.device = self
        return self

    def __exit__(self, *exception) -> None:
        default_device.device = default_device.entered.pop()


class _CurrentGPU(threading.local):
    """The GPU a bare "cuda" means on this thread (`genesis.cuda.set_device`); 0 at first."""

    index = 0


current_gpu = _CurrentGPU()


class _DefaultDevice(threading.local):
    """Where tensors are made when no device is given (`set_default_device`, a `with
    device:` block), per thread as in PyTorch; `entered` keeps the defaults that `with`
    blocks replaced, to restore on leaving them."""

    def __init__(self):
        self.device = None  # None: the CPU
        self.entered = []


default_device = _DefaultDevice()


def set_default_device(spec) -> None:
    """Make tensors on `spec` ("cpu", "cuda", "cuda:N" or a device; None: back to the CPU)
    when a factory (`zeros`, `tensor`, `randn`, a module's parameters...) is given no device,
    as `torch.set_default_device`; for this thread. Tensors from existing ones (`zeros_like`,
    `from_numpy`, `as_tensor` of a tensor) stay where those are. A CUDA default without a
    GPU is accepted here and refused, saying why, when a tensor is made.

    >>> import genesis
    >>> genesis.set_default_device("cpu"); genesis.get_default_device()
    device(type='cpu')
    >>> genesis.set_default_device(None)
    """
    default_device.device = None if spec is None else device(spec)


def get_default_device() -> Device:
    """The device factories use when given none (`set_default_device`): the CPU at first.

    >>> import genesis
    >>> with genesis.device("cuda:1"):
    ...     genesis.get_default_device()
    device(type='cuda', index=1)
    """
    return default_device.device or cpu


def device(spec="cpu", index: int | None = None) -> Device:
    """Parse "cpu", "cuda", "cuda:N" (or a Device) into a Device; as in PyTorch, the index
    may come second: device("cuda", 1) is device("cuda:1"). The CPU has index 0 only, and
    "cpu:0" is the CPU.

    A bare "cuda" means the current GPU: 0 unless `genesis.cuda.set_device` chose
    another; None means the default device (`set_default_device`, the CPU at first).
    Creating the object never fails; using a CUDA device without CuPy or a GPU raises
    `DeviceError` saying why.

    >>> device("cuda", 1), device("cpu", 0)
    (device(type='cuda', index=1), device(type='cpu'))
    """
    if index is not None:
        return _with_index(spec, index)
    if isinstance(spec, Device):
        return spec
    if spec is None:
        return default_device.device or cpu
    if isinstance(spec, int):
        return Device("cuda", spec)
    text = str(spec).strip().lower()
    kind, _, number = text.partition(":")
    if kind == "cpu" and number in ("", "0"):  # "cpu:0", as device("cpu", 0)
        return cpu
    if kind == "cuda":
        if not number:
            return Device("cuda", current_gpu.index)
        if number.isdigit():
            return Device("cuda", int(number))
    raise DeviceError(f"unknown device {spec!r}; expected 'cpu', 'cpu:0', 'cuda' or 'cuda:N'")


def _with_index(kind, index) -> Device:
    """device(kind, index): a type without an index of its own, and a non-negative int."""
    if not isinstance(kind, str) or kind.strip().lower() not in ("cpu", "cuda"):
        raise DeviceError(f"device({kind!r}, {index!r}): with an index, the type must be 'cpu' "
                          "or 'cuda' (an index given twice, as in 'cuda:1', is ambiguous)")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise DeviceError(f"device({kind!r}, {index!r}): the index must be an int >= 0")
    if kind.strip().lower() == "cpu":
        if index != 0:
            raise DeviceError(f"device('cpu', {index}): the CPU has index 0 only")
        return cpu
    return Device("cuda", index)


cpu = Device("cpu")


def device_mismatch_message(op: str, first, second) -> str:
    """What an op says when its tensors sit on two devices (PyTorch's words, and the way out).

    >>> device_mismatch_message("add", device("cuda"), cpu)
    'add: expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu; move them to one device with .to(device)'
    """
    return (f"{op}: expected all tensors to be on the same device, but found at least two "
            f"devices, {first} and {second}; move them to one device with .to(device)")


def is_cpu_scalar(tensor) -> bool:
    """Whether `tensor` is 0-d and on the CPU: PyTorch lets such a tensor join an op on any
    device, as a number (genesis copies it over)."""
    return tensor._device is cpu and tensor._data.ndim == 0


def devices_agree(a, b) -> bool:
    """Whether tensors `a` and `b` may meet in one op: one device, or one of them a 0-d CPU
    tensor (`is_cpu_scalar`).

    >>> import genesis
    >>> devices_agree(genesis.ones(2), genesis.tensor(3.0))
    True
    """
    return a._device is b._device or is_cpu_scalar(a) or is_cpu_scalar(b)


def fake_cuda_count() -> int:
    """Test-only switch: `GENESIS_FAKE_CUDA=N` backs N "cuda" devices with NumPy (1 for "1"),
    so device plumbing runs without a GPU; 0 when the variable is unset."""
    value = os.environ.get("GENESIS_FAKE_CUDA", "")
    return int(value) if value.isdigit() else 0


def cupy_runtime():
    """CuPy and the number of GPUs it sees; DeviceError saying why when either is missing."""
    try:
        import cupy
    except Exception as error:  # ImportError, or a broken CUDA install failing at import
        raise DeviceError(
            "CUDA was requested but CuPy is not importable "
            f"({error}); install it with: pip install 'genesis-autograd[cuda]'"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy raises its own CUDARuntimeError subclasses
        raise DeviceError(f"CUDA was requested but no usable GPU was found: {error}") from None
    if count == 0:
        raise DeviceError("CUDA was requested but no usable GPU was found")
    return cupy, count


def _cuda_namespace(index: int):
    fake = fake_cuda_count()
    if fake:
        if index >= fake:
            raise DeviceError(f"cuda:{index} was requested but GENESIS_FAKE_CUDA provides "
                              f"{fake} fake GPU(s)")
        return np
    cupy, count = cupy_runtime()
    if index >= count:
        raise DeviceError(f"cuda:{index} was requested but this machine has {count} GPU(s)")
    return cupy


def namespace_of(array):
    """The namespace (numpy or cupy) an array or array scalar belongs to.

    >>> import numpy as np
    >>> namespace_of(np.zeros(2)) is np
    True
    """
    if isinstance(array, np.ndarray | np.generic):
        return np
    import cupy

    return cupy.get_array_module(array)


def transfer(array, source: Device, target: Device):
    """Copy `array` from `source` to `target` (same device: returned as is)."""
    if source == target:
        return array
    if target.type == "cpu":  # from any GPU, current or not
        return np.array(array) if isinstance(array, np.ndarray | np.generic) else array.get()
    xp = target.xp
    if xp is np:
        return np.array(array)
    with xp.cuda.Device(target.index or 0):
        # ndarray.copy() copies onto the current GPU even from another one; asarray
        # would hand back the array itself when it already is a CuPy array.
        return array.copy() if isinstance(array, xp.ndarray) else xp.asarray(array)


_PINNED = weakref.WeakValueDictionary()  # id -> host array genesis allocated page-locked


def pinned_copy(array):
    """A copy of the host `array` in page-locked memory (so a copy to the GPU can run
    asynchronously), allocated by CuPy; under GENESIS_FAKE_CUDA ordinary memory, marked
    pinned. DeviceError, as PyTorch raises, when no CUDA device is available."""
    try:
        xp = device("cuda").xp
    except DeviceError as error:
        raise DeviceError(f"pin_memory needs a CUDA device for page-locked host memory: "
                          f"{error}") from None
    if xp is np:
        copy = np.array(array)
    else:
        import cupyx

        copy = cupyx.empty_pinned(array.shape, array.dtype)
        copy[...] = array
    _PINNED[id(copy)] = copy
    return copy


def is_pinned(array) -> bool:
    """Whether `array` (or the array it views) is host memory `pinned_copy` allocated."""
    while isinstance(array, np.ndarray):
        if _PINNED.get(id(array)) is array:
            return True
        array = array.base
    return False


def host_numbers(device: Device, *values) -> list:
    """0-d arrays (or array scalars) on `device` as Python numbers, read in one transfer: a
    GPU is waited for once, not once per value.

    >>> import numpy as np
    >>> host_numbers(cpu, np.int64(3), np.float32(0.5))
    [3, 0.5]
    """
    if device.type == "cpu":
        return [value.item() for value in values]
    return device.xp.stack(values).tolist()


def writeable(array) -> bool:
    """Whether `array` may be changed in place: NumPy has read-only arrays (broadcast views),
    CuPy arrays are always writeable.

    >>> import numpy as np
    >>> writeable(np.zeros(2)), writeable(np.broadcast_to(np.zeros(1), (2,)))
    (True, False)
    """
    return array.flags.writeable if isinstance(array, np.ndarray) else True
