"""`torch.backends.cudnn`: genesis has no cuDNN; its switches are accepted and unused."""
from __future__ import annotations

__all__ = ["benchmark", "deterministic", "enabled", "allow_tf32", "is_available", "version"]

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    """False: genesis does not use cuDNN.

    >>> is_available()
    False
    """
    return False


def version() -> None:
    """None, as PyTorch answers without cuDNN."""
    return None
