"""PyTorch's deprecated module names, kept so old scripts run: `Container` (use `Module`)
and `NLLLoss2d` (use `NLLLoss`). Each warns with FutureWarning when built, as PyTorch does."""
from __future__ import annotations

import warnings

from ..tensor import Tensor
from .loss import NLLLoss
from .module import Module

__all__ = ["Container", "NLLLoss2d"]


class Container(Module):
    """A Module holding the modules given as keyword arguments (deprecated: subclass Module).

    >>> import genesis, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     list(genesis.nn.Container(head=genesis.nn.Linear(2, 2))._modules)
    ['head']
    """

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for name, module in kwargs.items():
            self.add_module(name, module)


class NLLLoss2d(NLLLoss):
    """`NLLLoss` under its old name for (N, C, H, W) inputs (deprecated: use NLLLoss).

    >>> import genesis, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     loss = genesis.nn.NLLLoss2d()
    >>> loss(genesis.full((1, 2, 3, 3), -0.5), genesis.zeros(1, 3, 3).long()).item()
    0.5
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement.", FutureWarning, stacklevel=2)
        if size_average is not None or reduce is not None:
            reduction = "none" if reduce is False else "sum" if size_average is False else "mean"
        super().__init__(weight, ignore_index, reduction)
