"""Layouts and memory formats, as PyTorch names them (`torch.strided`, `torch.channels_last`).

Genesis keeps every tensor strided (dense): `genesis.strided` is the only layout. A memory
format only says how a dense tensor's elements are ordered in memory; it never changes a
value, so genesis accepts each one where PyTorch does (`x.contiguous(memory_format=...)`,
`x.to(memory_format=...)`, `model.to(memory_format=...)`) and keeps its own row-major order.

>>> import genesis
>>> genesis.channels_last, genesis.zeros(1).layout
(genesis.channels_last, genesis.strided)
>>> genesis.zeros(1, 2, 3, 3).contiguous(memory_format=genesis.channels_last).shape
genesis.Size([1, 2, 3, 3])
"""
from __future__ import annotations

__all__ = ["layout", "memory_format", "strided", "contiguous_format", "channels_last",
           "channels_last_3d", "preserve_format", "legacy_contiguous_format", "check_memory_format"]


class layout:
    """How a tensor's elements are stored (PyTorch's `torch.layout`); genesis has `strided`."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"genesis.{self.name}"


class memory_format:
    """An order of a dense tensor's elements in memory (PyTorch's `torch.memory_format`)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"genesis.{self.name}"


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")  # row-major, as contiguous_format
_RANK_NEEDED = {channels_last: 4, channels_last_3d: 5}


def check_memory_format(memory_format_given, shape: tuple, op: str) -> None:
    """Refuse what PyTorch refuses: something that is not a memory format, or channels_last
    (channels_last_3d) on a tensor that is not 4-D (5-D)."""
    if memory_format_given is None:
        return
    if not isinstance(memory_format_given, memory_format):
        raise TypeError(f"{op}: memory_format must be a genesis memory format such as "
                        f"genesis.channels_last, got {type(memory_format_given).__name__}")
    rank = _RANK_NEEDED.get(memory_format_given)
    if rank is not None and len(shape) != rank:
        raise RuntimeError(f"{op}: {memory_format_given.name} is only for {rank}-D tensors, "
                           f"got a {len(shape)}-D tensor; use genesis.contiguous_format")
