"""`torch._vmap_internals`, the private vmap that PyTorch's batched-gradient checks use:
`_vmap(func, in_dims, out_dims)` is `genesis.func.vmap` (a loop over the samples).

>>> import genesis
>>> _vmap(lambda row: row.sum(), 0, 0)(genesis.ones(2, 3))
tensor([3., 3.])
"""
from __future__ import annotations

from .vmap import vmap

__all__ = ["_vmap"]


def _vmap(func, in_dims=0, out_dims=0):
    """`func` mapped over dim `in_dims` of its inputs, the results stacked at `out_dims`."""
    return vmap(func, in_dims, out_dims)
