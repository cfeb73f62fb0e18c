"""`torch.accelerator` as genesis answers it: the accelerator is a CUDA GPU when genesis can
use one (CuPy and a GPU present), else there is none."""
from __future__ import annotations

from ..cuda import current_device, device_count as _cuda_device_count, is_available, synchronize
from ..device import device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "synchronize"]


def current_accelerator():
    """The accelerator device type (`device("cuda")`) when one is available, else None.

    >>> current_accelerator() is None or str(current_accelerator()) == "cuda"
    True
    """
    return device("cuda") if is_available() else None


def device_count() -> int:
    """How many GPUs genesis can use."""
    return _cuda_device_count() if is_available() else 0


def current_device_index() -> int:
    """The current GPU's number (-1 without one)."""
    return current_device() if is_available() else -1
