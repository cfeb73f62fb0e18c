"""`torch.backends.cuda`: the TF32 and SDPA switches scripts set, accepted; genesis's GPU
matmuls keep float32 precision whatever they say."""
from __future__ import annotations

import types

from ...cuda import is_available

__all__ = ["matmul", "is_built", "flash_sdp_enabled", "enable_flash_sdp",
           "enable_mem_efficient_sdp", "enable_math_sdp"]

matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                               allow_bf16_reduced_precision_reduction=True)


def is_built() -> bool:
    """Whether genesis can run on a GPU here (CuPy and a GPU are present)."""
    return is_available()


def flash_sdp_enabled() -> bool:
    """False: genesis's attention is not flash attention."""
    return False


def enable_flash_sdp(enabled: bool) -> None:
    """Accepted; genesis has one attention implementation."""


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Accepted; genesis has one attention implementation."""


def enable_math_sdp(enabled: bool) -> None:
    """Accepted; genesis's attention is the math one."""
