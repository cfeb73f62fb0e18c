"""`use_deterministic_algorithms` (PyTorch's switch for reproducible results). genesis's CPU
ops are deterministic, so the switch changes nothing there. On a GPU, adding into repeated
positions (the backward of indexing, gather and embedding, index_add_) uses atomic
additions, whose order (and so float rounding) varies between runs: with the switch on,
such a call raises (or warns, with `warn_only=True`) instead of running."""
from __future__ import annotations

import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "refuse_nondeterministic",
           "set_deterministic_debug_mode", "get_deterministic_debug_mode"]

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


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """PyTorch's other spelling of the switch: 0 or "default" (off), 1 or "warn" (warn only),
    2 or "error" (refuse).

    >>> set_deterministic_debug_mode("warn"); get_deterministic_debug_mode()
    1
    >>> set_deterministic_debug_mode(0)
    """
    level = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if level not in (0, 1, 2) or isinstance(level, bool):
        raise RuntimeError(f"invalid value of debug_mode, expected one of 0, 1, 2 or "
                           f"{list(_DEBUG_MODES)}, but got {debug_mode!r}")
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (refuse), as `set_deterministic_debug_mode` takes them."""
    if not _mode["enabled"]:
        return 0
    return 1 if _mode["warn_only"] else 2


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
