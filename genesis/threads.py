"""How many threads genesis's CPU work uses: NumPy's BLAS (matmul, conv as im2col) runs
on a thread pool, resized here through threadpoolctl (PyTorch's `torch.set_num_threads`,
`torch.get_num_threads`), and long elementwise formulas on large arrays (gelu) share
their blocks among as many threads (`genesis.cpu_workers`). Other elementwise NumPy work
is single-threaded whatever the setting.
threadpoolctl comes with `pip install genesis-autograd`; genesis itself imports without it,
and then only these functions say it is missing."""
from __future__ import annotations

import os

from .cpu_workers import set_thread_count

try:  # installed with genesis; optional for the framework itself (NumPy is its only hard dependency)
    from threadpoolctl import ThreadpoolController
except ImportError:
    ThreadpoolController = None

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads"]

_controller = ThreadpoolController() if ThreadpoolController is not None else None


def _pools() -> ThreadpoolController:
    if _controller is None:
        raise ImportError("sizing NumPy's BLAS thread pools needs the threadpoolctl package: "
                          "pip install threadpoolctl")
    return _controller
_interop_threads = [os.cpu_count() or 1]


def set_num_threads(count: int) -> None:
    """Use `count` threads in the BLAS thread pools (from now on, process-wide).

    >>> before = get_num_threads(); set_num_threads(1); get_num_threads()
    1
    >>> set_num_threads(before)
    """
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {count!r}")
    _pools().limit(limits=count, user_api="blas")
    set_thread_count(count)


def get_num_threads() -> int:
    """The threads the BLAS pools use (the largest, when there are several); 1 without one."""
    counts = [pool["num_threads"] for pool in _pools().info() if pool["user_api"] == "blas"]
    return max(counts, default=1)


def set_num_interop_threads(count: int) -> None:
    """Recorded for `get_num_interop_threads`: genesis runs ops one after another, so there
    is no inter-op pool for it to size."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, got {count!r}")
    _interop_threads[0] = count


def get_num_interop_threads() -> int:
    """What `set_num_interop_threads` recorded (the CPU count until then)."""
    return _interop_threads[0]
