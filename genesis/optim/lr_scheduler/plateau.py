"""`ReduceLROnPlateau`: lower the lrs when a metric stops improving."""
from __future__ import annotations

import math
import warnings

from ..optimizer import Optimizer
from .base import EPOCH_DEPRECATION_WARNING, per_group, set_group_value

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau:
    """Multiply every group's lr by `factor` once a metric has stopped improving for more
    than `patience` calls of `step(metric)` (then wait `cooldown` calls before counting
    again); lrs never go below `min_lr`, and changes smaller than `eps` are skipped.

    `mode` "min" (a loss) or "max" (an accuracy); an improvement must beat the best value by
    `threshold`, relative ("rel": best * (1 - threshold) for "min") or absolute ("abs").

    >>> import genesis
    >>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = genesis.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
    >>> for loss in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0]:
    ...     scheduler.step(loss)
    >>> scheduler.get_last_lr()
    [0.010000000000000002]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0.0, eps: float = 1e-8):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode!r} is unknown; use 'min' or 'max'")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode {threshold_mode!r} is unknown; "
                             "use 'rel' or 'abs'")
        self.optimizer = optimizer
        self.min_lrs = per_group("min_lr", optimizer, min_lr)
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self, metrics, epoch: int | None = None) -> None:
        """Record this epoch's metric (a number or a one-element tensor) and reduce the lrs
        if it has plateaued; `epoch` (deprecated, with PyTorch's warning) sets the epoch
        number."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, min_lr)
                if old - new > self.eps:
                    set_group_value(group, "lr", new)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _is_better(self, current: float) -> bool:
        best, threshold = self.best, self.threshold
        if self.mode == "min":
            return current < (best * (1 - threshold) if self.threshold_mode == "rel"
                              else best - threshold)
        return current > (best * (1 + threshold) if self.threshold_mode == "rel"
                          else best + threshold)

    def get_last_lr(self) -> list:
        """The lrs after the latest `step()` (one per param group)."""
        return self._last_lr

    def state_dict(self) -> dict:
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
