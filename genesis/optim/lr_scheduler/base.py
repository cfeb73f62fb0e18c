"""`LRScheduler`, the base class of the epoch-driven schedulers: it records each group's
`initial_lr`, sets the lrs at construction (step 0) and at each `step()`, and saves its state.

Like PyTorch's, its first `step()` warns when the optimizer has not stepped since the
scheduler was built (the schedule's first value is then never used), and `step(epoch)`,
deprecated in PyTorch but still accepted there, warns and jumps to `epoch`.

>>> import genesis
>>> from genesis.optim.lr_scheduler.base import LRScheduler
>>> class Halving(LRScheduler):
...     def get_lr(self):
...         return [base_lr / 2 ** self.last_epoch for base_lr in self.base_lrs]
>>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
>>> scheduler = Halving(optimizer)
>>> optimizer.step(); scheduler.step()
>>> scheduler.get_last_lr()
[0.5]
"""
from __future__ import annotations

import warnings
from typing import Protocol

from ...listeners import Listeners
from ...tensor import Tensor
from ..optimizer import Optimizer, scalar

__all__ = ["LRScheduler", "listeners", "SchedulerListener", "tell_stepped", "set_group_value"]


class SchedulerListener(Protocol):
    """Told when a learning-rate scheduler steps (genesis trace: one stepped before its
    optimizer skips its first learning rate)."""

    def scheduler_stepped(self, scheduler) -> None:
        """`scheduler.step()` was called by the user (not the step a scheduler makes as it
        is built)."""


listeners: Listeners[SchedulerListener] = Listeners()

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")
STEPPED_BEFORE_OPTIMIZER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")


def set_group_value(group: dict, key: str, value) -> None:
    """Set a param group's `key` (its "lr") to `value`; a Tensor held there (a Tensor lr) is
    filled in place, as PyTorch's schedulers do, so the optimizer and the script keep the one
    tensor they share.

    >>> import genesis
    >>> lr = genesis.tensor(0.1)
    >>> group = {"lr": lr}
    >>> set_group_value(group, "lr", 0.05); group["lr"] is lr, round(lr.item(), 4)
    (True, 0.05)
    """
    if isinstance(group[key], Tensor):
        group[key].fill_(scalar(value))
    else:
        group[key] = value


def tell_stepped(scheduler) -> None:
    """Tell the listeners that `scheduler` is stepped (from every scheduler's `step`)."""
    if listeners and not getattr(scheduler, "_is_initial", False):
        for listener in listeners:
            listener.scheduler_stepped(scheduler)


class LRScheduler:
    """Base class: subclasses implement `get_lr()` (the lrs for `self.last_epoch`)."""

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:  # a Tensor lr is filled in place: copied here
                initial = group["lr"]
                group.setdefault("initial_lr", initial.clone() if isinstance(initial, Tensor)
                                 else initial)
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                                   "when resuming a scheduler with last_epoch >= 0; load the "
                                   "optimizer's state dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._optimizer_steps_when_built = optimizer._step_calls
        self._initial_step()

    def _initial_step(self) -> None:
        """The step a scheduler makes when it starts (at construction, or in SequentialLR)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def optimizer_stepped_since_built(self) -> bool:
        """Whether `optimizer.step()` ran since this scheduler was built; a first `step()`
        before it means the schedule's first value is never used."""
        return self.optimizer._step_calls > self._optimizer_steps_when_built

    def get_lr(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def step(self, epoch: int | None = None) -> None:
        """Advance one step (call after `optimizer.step()`) and set the new lrs; `epoch`
        (deprecated, with PyTorch's warning) jumps there instead, by the closed form where
        the schedule has one."""
        if self._step_count == 1 and not self.optimizer_stepped_since_built():
            warnings.warn(STEPPED_BEFORE_OPTIMIZER_WARNING, UserWarning, stacklevel=2)
        tell_stepped(self)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._jump_to(epoch)

    def _jump_to(self, epoch: int | None) -> None:
        """Set the lrs of the next epoch (None), or of `epoch` from the closed form (where a
        scheduler has one: SequentialLR starts a scheduler afresh this way)."""
        if epoch is None:
            self.last_epoch += 1
            lrs = self.get_lr()
        else:
            self.last_epoch = epoch
            lrs = self._closed_form() if hasattr(self, "_closed_form") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            set_group_value(group, "lr", lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        """The lrs set by the latest `step()` (one per param group)."""
        return self._last_lr

    def _current_lrs(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


def per_group(name: str, optimizer: Optimizer, value) -> list:
    """`value` once per param group: a list or tuple (one per group) as given, else repeated."""
    groups = len(optimizer.param_groups)
    if isinstance(value, list | tuple):
        if len(value) != groups:
            raise ValueError(f"expected {groups} values for {name}, got {len(value)}")
        return list(value)
    return [value] * groups
