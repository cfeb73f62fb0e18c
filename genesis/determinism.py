"""`use_deterministic_algorithms` (PyTorch's switch for reproducible results). genesis's CPU
ops are deterministic, so the switch changes nothing there. On a GPU, adding into repeated
positions (the backward of indexing, gather and embedding, index_add_) uses atomic
additions, whose order (and so float rounding) varies between runs: with the switch on,
such a call raises (or warns, with `warn_only=True`) instead of running."""
from __future__ import annotations

import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "refuse_nondeterministic"]

_mode = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Refuse (or warn about) operations whose results can vary between identical runs.

    >>> use_deterministic_algorithms(True); are_deterministic_algorithms_enabled()
    True
    >>> use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _mode["enabled"], _mode["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether `use_deterministic_algorithms(True)` is in force."""
    return _mode["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether it only warns."""
    return _mode["enabled"] and _mode["warn_only"]


def refuse_nondeterministic(what: str) -> None:
    """Called before a nondeterministic GPU operation: raise (or warn) when the switch is on."""
    if not _mode["enabled"]:
        return
    message = (f"{what} does not have a deterministic implementation in genesis, but "
               "use_deterministic_algorithms(True) is set: run it on the CPU, or call "
               "use_deterministic_algorithms(True, warn_only=True) to allow it with a warning")
    if _mode["warn_only"]:
        warnings.warn(message, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(message)
