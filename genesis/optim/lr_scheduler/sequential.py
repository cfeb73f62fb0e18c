"""Schedulers made of other schedulers: `SequentialLR` runs them one after another,
`ChainedScheduler` steps them all at once."""
from __future__ import annotations

from bisect import bisect_right

from ..optimizer import Optimizer
from .base import set_group_value, tell_stepped
from .plateau import ReduceLROnPlateau

__all__ = ["SequentialLR", "ChainedScheduler"]


class SequentialLR:
    """Run `schedulers` one after another, switching at each epoch in `milestones` (one fewer
    than schedulers): e.g. a LinearLR warmup, then CosineAnnealingLR. Each scheduler starts
    from its own epoch 0 when its turn comes.

    >>> import genesis
    >>> from genesis.optim import lr_scheduler as schedulers
    >>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = schedulers.LinearLR(optimizer, start_factor=0.5, total_iters=2)
    >>> decay = schedulers.ExponentialLR(optimizer, gamma=0.5)
    >>> scheduler = schedulers.SequentialLR(optimizer, [warmup, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(scheduler.get_last_lr()[0]); optimizer.step(); scheduler.step()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list, last_epoch: int = -1):
        if not schedulers:
            raise ValueError("SequentialLR: expected at least one scheduler")
        for index, scheduler in enumerate(schedulers):
            _check_chainable("SequentialLR", index, scheduler, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expected {len(schedulers) - 1} milestones for "
                             f"{len(schedulers)} schedulers, got {len(milestones)}")
        self.optimizer, self._schedulers, self._milestones = optimizer, list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            set_group_value(group, "lr", group["initial_lr"])
        for scheduler in self._schedulers:  # undo the step each made at construction
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one step; at a milestone the next scheduler starts at its epoch 0."""
        tell_stepped(self)
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._jump_to(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def get_last_lr(self) -> list:
        return self._last_lr

    def state_dict(self) -> dict:
        """This scheduler's attributes, with each inner scheduler's state dict."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        self.__dict__.update(state)


class ChainedScheduler(SequentialLR):
    """Step every one of `schedulers` at each step (their effects compound), e.g. a
    ConstantLR warmup together with an ExponentialLR decay."""

    def __init__(self, schedulers: list, optimizer: Optimizer | None = None):
        if not schedulers:
            raise ValueError("ChainedScheduler: expected at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        for index, scheduler in enumerate(schedulers):
            _check_chainable("ChainedScheduler", index, scheduler, optimizer)
        self.optimizer, self._schedulers = optimizer, list(schedulers)
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self) -> None:
        """Step each scheduler in turn."""
        tell_stepped(self)
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


def _check_chainable(owner: str, index: int, scheduler, optimizer: Optimizer) -> None:
    if isinstance(scheduler, ReduceLROnPlateau):
        raise ValueError(f"{owner}: ReduceLROnPlateau (at index {index}) needs a metric at each "
                         "step, so it can't be sequenced or chained")
    if getattr(scheduler, "optimizer", None) is not optimizer:
        raise ValueError(f"{owner}: the scheduler at index {index} "
                         f"({type(scheduler).__name__}) belongs to another optimizer")
