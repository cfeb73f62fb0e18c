"""Schedules given as functions of the epoch: `LambdaLR` (lr = base_lr * f(epoch)),
`MultiplicativeLR` (lr *= f(epoch) each step) and `get_cosine_schedule_with_warmup`.

>>> import genesis
>>> from genesis.optim.lr_scheduler import LambdaLR
>>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
>>> scheduler = LambdaLR(optimizer, lambda epoch: 1 / (epoch + 1))
>>> optimizer.step(); scheduler.step()
>>> scheduler.get_last_lr()
[0.5]
"""
from __future__ import annotations

import math
import types

from ..optimizer import Optimizer
from .base import LRScheduler, per_group

__all__ = ["LambdaLR", "MultiplicativeLR", "get_cosine_schedule_with_warmup"]


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch) (one lambda, or one per param group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, list | tuple):
            if len(lr_lambda) != groups:
                raise ValueError(f"expected {groups} lr_lambdas, got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        """Attributes except the optimizer; lambdas only as the attributes of callable objects
        (plain functions and lambdas can't be saved)."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved_lambdas):
            if attributes is not None:
                fn.__dict__.update(attributes)


class MultiplicativeLR(LRScheduler):
    """Multiply the lr by `lr_lambda(epoch)` at every step (one lambda, or one per group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = per_group("lr_lambda", optimizer, lr_lambda)
        for function in self.lr_lambdas:
            if not callable(function):
                raise TypeError(f"lr_lambda should be a function, got {type(function).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return self._current_lrs()
        return [lr * function(self.last_epoch) for function, lr in zip(self.lr_lambdas, self._current_lrs())]

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict


class _WarmupCosine:
    """Linear warmup to 1 over `warmup_steps`, then cosine decay to 0 at `total_steps`."""

    def __init__(self, warmup_steps: int, total_steps: int, num_cycles: float):
        self.warmup_steps, self.total_steps, self.num_cycles = warmup_steps, total_steps, num_cycles

    def __call__(self, step: int) -> float:
        if step < self.warmup_steps:
            return step / max(1, self.warmup_steps)
        progress = (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * self.num_cycles * 2.0 * progress)))


def get_cosine_schedule_with_warmup(optimizer: Optimizer, num_warmup_steps: int,
                                    num_training_steps: int, num_cycles: float = 0.5,
                                    last_epoch: int = -1) -> LambdaLR:
    """Warm up linearly from 0 to the base lr over `num_warmup_steps`, then follow a cosine
    down to 0 at `num_training_steps` (the Hugging Face schedule), as a `LambdaLR`.

    >>> import genesis
    >>> optimizer = genesis.optim.AdamW([genesis.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = genesis.optim.lr_scheduler.get_cosine_schedule_with_warmup(optimizer, 2, 6)
    >>> lrs = []
    >>> for _ in range(7):
    ...     lrs.append(round(scheduler.get_last_lr()[0], 4)); optimizer.step(); scheduler.step()
    >>> lrs
    [0.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 0.0]
    """
    if num_warmup_steps < 0 or num_training_steps < num_warmup_steps:
        raise ValueError(f"need 0 <= num_warmup_steps <= num_training_steps, got "
                         f"{num_warmup_steps} and {num_training_steps}")
    return LambdaLR(optimizer, _WarmupCosine(num_warmup_steps, num_training_steps, num_cycles),
                    last_epoch)
