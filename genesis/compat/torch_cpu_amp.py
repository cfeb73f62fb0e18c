"""`torch.cpu.amp`, PyTorch's older spelling of CPU mixed precision: `autocast(enabled,
dtype, cache_enabled)` is `genesis.amp.autocast("cpu", ...)` (bfloat16 by default), and
`GradScaler(init_scale, ...)` is `genesis.amp.GradScaler("cpu", ...)`.

>>> import genesis
>>> with autocast():
...     genesis.nn.functional.linear(genesis.ones(1, 2), genesis.ones(3, 2)).dtype
genesis.bfloat16
"""
from __future__ import annotations

from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..dtypes import bfloat16

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """`torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)`."""

    def __init__(self, enabled: bool = True, dtype=bfloat16, cache_enabled: bool = True):
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """`torch.cpu.amp.GradScaler(init_scale, growth_factor, backoff_factor, growth_interval,
    enabled)`."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
