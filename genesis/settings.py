"""PyTorch's process-wide switches that programs set at the top of a script, with what each
means for genesis:

- `set_float32_matmul_precision` / `get_float32_matmul_precision`: genesis always multiplies
  float32 matrices in full float32 ("highest"), which every setting permits; the setting is
  kept and reported back.
- `set_anomaly_enabled` / `is_anomaly_enabled`: the global form of `detect_anomaly`.
- `set_default_tensor_type`: the legacy way to change the default dtype.
- `set_warn_always` / `is_warn_always_enabled`, `set_flush_denormal` (False: not done),
  the autocast queries (`get_autocast_gpu_dtype`, ...), `typename`, `is_storage`.

>>> import genesis
>>> genesis.set_float32_matmul_precision("high"); genesis.get_float32_matmul_precision()
'high'
>>> genesis.set_float32_matmul_precision("highest")
"""
from __future__ import annotations

from . import amp, dtypes
from .autograd import anomaly
from .device import set_default_device
from .ops.tensor_info import type_of
from .tensor import Tensor

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "set_anomaly_enabled",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_default_tensor_type", "set_warn_always", "is_warn_always_enabled",
           "set_flush_denormal", "is_autocast_enabled", "get_autocast_dtype",
           "get_autocast_gpu_dtype", "get_autocast_cpu_dtype", "is_autocast_cpu_enabled",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "typename", "is_storage"]

_PRECISIONS = ("highest", "high", "medium")
_settings = {"matmul_precision": "highest", "warn_always": False, "autocast_cache": True}


def set_float32_matmul_precision(precision: str) -> None:
    """Record how precise float32 matrix products may be ("highest", "high" or "medium").
    genesis computes them in full float32 whatever the setting, which each one allows."""
    if precision not in _PRECISIONS:
        raise RuntimeError(f"set_float32_matmul_precision: expected one of {list(_PRECISIONS)}, "
                           f"got {precision!r}")
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The value last given to `set_float32_matmul_precision` ("highest" at start)."""
    return _settings["matmul_precision"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the rest of the program (`detect_anomaly` is the
    scoped form).

    >>> set_anomaly_enabled(True); is_anomaly_enabled()
    True
    >>> set_anomaly_enabled(False)
    """
    anomaly.set_detect_anomaly(enabled, check_nan=check_nan)  # takes effect when made


is_anomaly_enabled = anomaly.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly.is_anomaly_check_nan_enabled


_LEGACY_TYPES = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
                 "HalfTensor": dtypes.float16, "BFloat16Tensor": dtypes.bfloat16}


def set_default_tensor_type(t) -> None:
    """The legacy form of `set_default_dtype` and `set_default_device`:
    `set_default_tensor_type(torch.DoubleTensor)` or its name ("torch.DoubleTensor"); a CUDA
    type ("torch.cuda.FloatTensor") makes CUDA the default device, a CPU type the CPU."""
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    short = name.rsplit(".", 1)[-1]
    if short not in _LEGACY_TYPES:
        raise TypeError(f"set_default_tensor_type: only floating point types are supported as "
                        f"the default type, got {name}")
    dtypes.set_default_dtype(_LEGACY_TYPES[short])
    set_default_device("cuda" if ".cuda." in name else None)


def set_warn_always(enabled: bool) -> None:
    """Record PyTorch's "warn every time, not once" flag (genesis's own warnings follow
    Python's warning filters either way)."""
    _settings["warn_always"] = bool(enabled)


def is_warn_always_enabled() -> bool:
    """The value last given to `set_warn_always` (False at start)."""
    return _settings["warn_always"]


def set_flush_denormal(mode: bool) -> bool:
    """False: genesis cannot make the CPU flush denormal numbers to zero, so they stay as
    they are (PyTorch returns False the same way where the CPU lacks the feature)."""
    return False


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for `device_type` in this thread; with no argument, for CUDA,
    as `torch.is_autocast_enabled()`."""
    return amp.is_autocast_enabled(device_type)


def get_autocast_dtype(device_type: str = "cuda"):
    """The dtype autocast runs ops on `device_type` in: the active one, else PyTorch's
    default for `device_type` (float16 on CUDA, bfloat16 on the CPU)."""
    active = amp.get_autocast_dtype(device_type)
    if active is not None:
        return active
    return dtypes.bfloat16 if str(device_type).startswith("cpu") else dtypes.float16


def get_autocast_gpu_dtype():
    """`get_autocast_dtype("cuda")`."""
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    """`get_autocast_dtype("cpu")`."""
    return get_autocast_dtype("cpu")


def is_autocast_cpu_enabled() -> bool:
    """`is_autocast_enabled("cpu")`."""
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled() -> bool:
    """The value last given to `set_autocast_cache_enabled` (True at start)."""
    return _settings["autocast_cache"]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Record the flag; genesis's autocast keeps no cache of cast weights, so it changes
    nothing."""
    _settings["autocast_cache"] = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing to clear: genesis's autocast keeps no cache of cast weights."""


def typename(obj) -> str:
    """A tensor's type name ("genesis.FloatTensor"), else the object's module.qualname.

    >>> import genesis
    >>> genesis.typename(genesis.zeros(1)), genesis.typename(3)
    ('genesis.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return type_of(obj)
    kind = obj if isinstance(obj, type) else type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"


def is_storage(obj) -> bool:
    """False: genesis has no storage objects."""
    return False
