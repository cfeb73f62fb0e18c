"""What the benchmarks share: thread settings, best-of timing, the side-by-side table.

Scripts run as `python bench/<name>.py`, so this module is importable as `_harness`.
"""
from __future__ import annotations

import ctypes
import os
import timeit

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (glibc's malloc.h)


def blas_threads() -> int:
    """The threads NumPy's OpenBLAS uses: OPENBLAS_NUM_THREADS or OMP_NUM_THREADS if set,
    else one per CPU this process may run on (OpenBLAS's own default)."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name)
        if value:
            return int(value)
    return len(os.sched_getaffinity(0))


def torch_matching_numpy():
    """PyTorch set to NumPy's BLAS thread count, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(blas_threads())
    return torch


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for reuse (no trimming of the heap top, no
    separate mapping per large array), as a caching allocator does; True if it took.

    By default glibc hands multi-megabyte blocks back to the kernel as soon as they are
    freed, and the next allocation of that size faults every page in again (zeroed):
    around 1 us per 4 KB page on this machine, 2 to 10 ms per training step. Applies to
    the whole process, so to every framework the script runs. Linux/glibc only.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30) and libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30))


def best_time(step, number: int, repeat: int = 5) -> float:
    """Seconds per call of `step`: the minimum over `repeat` runs of `number` calls, after a
    warm-up call (the least disturbed run is the closest to the code's own cost)."""
    step()
    return min(timeit.repeat(step, number=number, repeat=repeat)) / number


def print_table(rows: list, unit: str, reference: str = "genesis") -> None:
    """Print (name, time) rows with each time's ratio to the `reference` row's."""
    base = dict(rows)[reference]
    print(f"{'implementation':<30} {unit:>10} {reference + ' / this':>16}")
    for name, value in rows:
        print(f"{name:<30} {value:>10.2f} {base / value:>15.2f}x")
