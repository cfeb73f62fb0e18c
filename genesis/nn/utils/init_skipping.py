"""`skip_init`: a module built without its initialisation mattering, as PyTorch's
`torch.nn.utils.skip_init` (used before loading weights over a module's own)."""
from __future__ import annotations

import inspect

from ...rng import fork_rng
from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs) -> Module:
    """`module_cls(*args, **kwargs)` whose parameter values are not meant to be read before
    they are set. PyTorch builds it on its meta device and gives it empty storage; genesis has
    no meta device, so it builds the module as usual, on `device`, with the state of the
    random number generator kept: the draws of the default initialisation leave no trace, as
    in PyTorch, where none are made. The same checks as PyTorch's.

    >>> import genesis
    >>> _ = genesis.manual_seed(0); before = genesis.rand(1)
    >>> _ = genesis.manual_seed(0); layer = skip_init(genesis.nn.Linear, 5, 1)
    >>> tuple(layer.weight.shape), bool(genesis.rand(1) == before)
    ((1, 5), True)
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with fork_rng():
        return module_cls(*args, **kwargs)
