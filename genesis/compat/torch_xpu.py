"""`torch.xpu`: genesis has no Intel GPU (XPU) backend, so it answers as a PyTorch built
without one: nothing is available, seeding is accepted (PyTorch queues it until a device
appears), and asking for a device fails with the AssertionError PyTorch raises.

>>> is_available(), device_count(), is_initialized()
(False, 0, False)
"""
from __future__ import annotations

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "empty_cache", "synchronize", "current_device", "get_device_name"]

_NOT_BUILT = "genesis has no XPU (Intel GPU) backend: Torch not compiled with XPU enabled"


def is_available() -> bool:
    """False: genesis runs on the CPU and on NVIDIA GPUs only."""
    return False


def device_count() -> int:
    """0: no XPU is usable."""
    return 0


def is_initialized() -> bool:
    """False: there is no XPU state to initialise."""
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored, as in PyTorch without an XPU (the seed would apply on first use)."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as `manual_seed`."""


def seed() -> None:
    """Accepted and ignored, as `manual_seed`."""


def seed_all() -> None:
    """Accepted and ignored, as `manual_seed`."""


def empty_cache() -> None:
    """Nothing cached: does nothing, as in PyTorch without an XPU."""


def synchronize(device=None) -> None:
    """Raises AssertionError: there is no XPU to wait for (as PyTorch without one)."""
    raise AssertionError(_NOT_BUILT)


def current_device() -> int:
    """Raises AssertionError, as `synchronize`."""
    raise AssertionError(_NOT_BUILT)


def get_device_name(device=None) -> str:
    """Raises AssertionError, as `synchronize`."""
    raise AssertionError(_NOT_BUILT)
