"""`torch.cpu`: the CPU as a device module, as PyTorch answers it (always available, one
device named "cpu", nothing to synchronize), and `torch.cpu.amp`, the older spelling of CPU
autocast (`torch_cpu_amp`).

>>> is_available(), device_count(), current_device(), synchronize()
(True, 1, 'cpu', None)
"""
from __future__ import annotations

from . import torch_cpu_amp as amp

__all__ = ["is_available", "device_count", "current_device", "synchronize", "is_initialized",
           "amp"]


def is_available() -> bool:
    """True: there is always a CPU."""
    return True


def device_count() -> int:
    """1: PyTorch counts the CPU as one device."""
    return 1


def current_device() -> str:
    """"cpu"."""
    return "cpu"


def is_initialized() -> bool:
    """True: the CPU needs no initialising."""
    return True


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""
