"""`torch.hub`, the parts scripts use without the network: `tqdm` (the progress bar PyTorch
re-exports: tqdm's own when it is installed, else a minimal byte counter with PyTorch's
fallback interface) and the cache folder (`get_dir`, `set_dir`). Loading models from
GitHub or URLs (`load`, `load_state_dict_from_url`) is not served.

>>> get_dir().endswith("hub")
True
"""
from __future__ import annotations

import os
import sys

__all__ = ["tqdm", "get_dir", "set_dir"]

_hub_dir: str | None = None


class _ByteProgress:
    """PyTorch's stand-in for tqdm when tqdm is not installed: counts what `update` is given
    and writes the count (or the percentage of `total`) to stderr. Like PyTorch's, it is a
    context manager, not an iterable: `for x in tqdm(loader)` needs the real tqdm."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n) -> None:
        if self.disable:
            return
        self.n += n
        shown = f"{self.n:.1f} bytes" if self.total is None else f"{100 * self.n / float(self.total):.1f}%"
        sys.stderr.write(f"\r{shown}")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs) -> None:
        """Ignored, as by PyTorch's fallback."""

    def write(self, s) -> None:
        sys.stderr.write(f"{s}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _ByteProgress


def get_dir() -> str:
    """The hub cache folder: the one `set_dir` chose, else $TORCH_HOME/hub, $TORCH_HOME
    defaulting to $XDG_CACHE_HOME/torch and that to ~/.cache/torch (PyTorch's rule)."""
    if _hub_dir is not None:
        return _hub_dir
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.join(os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch"))), "hub")


def set_dir(d) -> None:
    """Make `d` (a path, `~` expanded) the hub cache folder."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)
