"""`torch.backends.mps`: genesis has no Apple-GPU (MPS) backend."""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: genesis runs on the CPU and on NVIDIA GPUs only.

    >>> is_available()
    False
    """
    return False


def is_built() -> bool:
    """False, as `is_available`."""
    return False
