"""`torch.cuda.amp`, PyTorch's older spelling of mixed precision: `autocast(enabled, dtype,
cache_enabled)` is `genesis.amp.autocast("cuda", ...)`, and `GradScaler(init_scale, ...)`
takes no device (it is `genesis.amp.GradScaler("cuda", ...)`)."""
from __future__ import annotations

from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..dtypes import float16

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """`torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)`."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """`torch.cuda.amp.GradScaler(init_scale, growth_factor, backoff_factor, growth_interval,
    enabled)`.

    >>> GradScaler(1024.0).get_scale()
    1024.0
    """

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
