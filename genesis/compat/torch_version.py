"""`torch.version` as genesis answers it: `__version__` is the PyTorch release whose
behaviour genesis follows (marked as genesis), `cuda` the CUDA runtime genesis reaches
through CuPy (None without one, as in a CPU-only PyTorch), and the other backends none.

>>> __version__.split("+")[1].startswith("genesis")
True
>>> hip is None and rocm is None and xpu is None and debug is False
True
"""
from __future__ import annotations

from .torch_backends import TORCH_VERSION

__all__ = ["__version__", "cuda", "hip", "rocm", "xpu", "debug"]

__version__ = TORCH_VERSION
hip = None
rocm = None
xpu = None
debug = False


def __getattr__(name: str):
    # `cuda` is looked up when read, so importing this module does not import CuPy
    if name == "cuda":
        return _cuda_runtime_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cuda_runtime_version() -> str | None:
    """The CUDA runtime version CuPy was built for ("12.4"), None without CuPy."""
    try:
        import cupy
    except ImportError:
        return None
    number = cupy.cuda.runtime.runtimeGetVersion()  # 12040 for CUDA 12.4
    return f"{number // 1000}.{number % 1000 // 10}"
