"""`SWALR`: the learning-rate scheduler of stochastic weight averaging, which anneals each
group's learning rate to its `swa_lr` over `anneal_epochs` steps and then holds it there.

>>> import genesis
>>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
>>> scheduler = SWALR(optimizer, swa_lr=0.2, anneal_epochs=4, anneal_strategy="linear")
>>> lrs = []
>>> for _ in range(6):
...     lrs.append(round(scheduler.get_last_lr()[0], 4)); optimizer.step(); scheduler.step()
>>> lrs
[1.0, 0.8, 0.6, 0.4, 0.2, 0.2]
"""
from __future__ import annotations

import math

from ..lr_scheduler.base import LRScheduler, per_group
from ..optimizer import Optimizer

__all__ = ["SWALR"]

STRATEGIES = ("cos", "linear")


def _linear_anneal(t):
    return t


def _cosine_anneal(t):
    return (1 - math.cos(math.pi * t)) / 2


ANNEAL_FUNCTIONS = {"cos": _cosine_anneal, "linear": _linear_anneal}


class SWALR(LRScheduler):
    """Anneal each group's learning rate from where it is to `swa_lr` (one number, or one
    per param group, stored as `group["swa_lr"]`) over `anneal_epochs` steps, by a half
    cosine ("cos") or a straight line ("linear"), then keep it at `swa_lr`. With
    `anneal_epochs=0` the first `step()` sets `swa_lr`. Like PyTorch's, each step starts
    from the group's current learning rate, so another scheduler may run before it.

    Bad arguments raise ValueError as PyTorch does: an `anneal_strategy` other than "cos"
    or "linear", an `anneal_epochs` that is not an int >= 0, a list of `swa_lr` whose length
    is not the number of param groups.

    >>> import genesis
    >>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = SWALR(optimizer, swa_lr=0.5, anneal_epochs=2)
    >>> optimizer.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer: Optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch: int = -1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, list | tuple) and len(swa_lr) != len(groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups. swa_lr "
                             f"has {len(swa_lr)} values, param_groups has {len(groups)}.")
        for group, lr in zip(groups, per_group("swa_lr", optimizer, swa_lr)):
            group["swa_lr"] = lr
        if anneal_strategy not in STRATEGIES:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = ANNEAL_FUNCTIONS[anneal_strategy]

    def _progress(self, step: int):
        """How far along the annealing `step` is, from 0 to 1."""
        return max(0, min(1, step / max(1, self.anneal_epochs)))

    def get_lr(self) -> list:
        """Each group's lr for this step: the lr the annealing started from is recovered
        from the group's current lr and the previous step's progress, then moved on."""
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous_alpha = self.anneal_func(self._progress(step - 1))
        alpha = self.anneal_func(self._progress(step))
        return [group["swa_lr"] * alpha
                + _starting_lr(group["lr"], group["swa_lr"], previous_alpha) * (1 - alpha)
                for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Every attribute except the optimizer and the annealing function (restored from
        the strategy's name on loading)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)


def _starting_lr(lr, swa_lr, alpha):
    """The lr that annealing by `alpha` towards `swa_lr` turned into `lr`."""
    if alpha == 1:
        return swa_lr
    return (lr - alpha * swa_lr) / (1 - alpha)
