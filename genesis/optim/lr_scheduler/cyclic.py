"""Schedules that cycle the lr (and the momentum the opposite way): `OneCycleLR`,
`CyclicLR`, and `CosineAnnealingWarmRestarts`.

>>> import genesis
>>> from genesis.optim.lr_scheduler import CyclicLR
>>> optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
>>> scheduler = CyclicLR(optimizer, base_lr=0.1, max_lr=0.5, step_size_up=2)
>>> lrs = []
>>> for _ in range(5):
...     lrs.append(round(scheduler.get_last_lr()[0], 4)); optimizer.step(); scheduler.step()
>>> lrs
[0.1, 0.3, 0.5, 0.3, 0.1]
"""
from __future__ import annotations

import math
import types

from ..optimizer import Optimizer
from .base import LRScheduler, per_group, set_group_value, tell_stepped

__all__ = ["OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts"]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith): warm up from max_lr / div_factor to max_lr over
    `pct_start` of the steps, then anneal to initial_lr / final_div_factor; momentum
    (or Adam's beta1) cycles the opposite way when `cycle_momentum`."""

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"expected a positive integer total_steps, got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"expected a positive integer epochs, got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"expected a positive integer steps_per_epoch, got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("you must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"expected a float pct_start between 0 and 1, got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = self._phases(pct_start, three_phase)
        groups = optimizer.param_groups
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, base_momentums, max_momentums = _momentum_range(
                "OneCycleLR", optimizer, base_momentum, max_momentum)
            if last_epoch == -1:
                for group, high, low in zip(groups, max_momentums, base_momentums):
                    if self.use_beta1:
                        group["betas"] = (high, *group["betas"][1:])
                    else:
                        group["momentum"] = high
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start: float, three_phase: bool) -> list:
        total = self.total_steps
        if three_phase:
            return [
                dict(end_step=float(pct_start * total) - 1, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * total) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=total - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        return [
            dict(end_step=float(pct_start * total) - 1, start_lr="initial_lr", end_lr="max_lr",
                 start_momentum="max_momentum", end_momentum="base_momentum"),
            dict(end_step=total - 1, start_lr="max_lr", end_lr="min_lr",
                 start_momentum="base_momentum", end_momentum="max_momentum"),
        ]

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"tried to step {step} times; the specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for index, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or index == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]],
                                                group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base lr to `eta_min` over `T_0` steps, then restart; each
    period is `T_mult` times the previous. `step(epoch)` may jump to a (fractional) epoch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got {T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got "
                             f"{T_mult!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one step, or go to `epoch` (where in the restarts it falls is worked out)."""
        tell_stepped(self)
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be non-negative, got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                restarts = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** restarts - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** restarts
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            set_group_value(group, "lr", lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CyclicLR(LRScheduler):
    """Cycle the lr between `base_lr` and `max_lr`: up over `step_size_up` steps, down over
    `step_size_down` (default: the same). `mode` "triangular" keeps the amplitude,
    "triangular2" halves it every cycle, "exp_range" scales it by gamma ** step; or give
    `scale_fn` (with `scale_mode` "cycle" or "iterations"). With `cycle_momentum`, momentum
    (or Adam's beta1) moves the opposite way between `base_momentum` and `max_momentum`."""

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn=None, scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"CyclicLR: mode {mode!r} is unknown and no scale_fn is given")
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                set_group_value(group, "lr", lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        self.mode, self.gamma, self.scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _momentum_range(
                "CyclicLR", optimizer, base_momentum, max_momentum)
            if last_epoch == -1:
                for group, momentum in zip(optimizer.param_groups, self.max_momentums):
                    self._set_momentum(group, momentum)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _scale(self, cycle: int) -> float:
        x = cycle if self.scale_mode == "cycle" else self.last_epoch
        if self.scale_fn_custom is not None:
            return self.scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x if self.mode == "exp_range" else 1.0

    def _set_momentum(self, group: dict, momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def get_lr(self) -> list:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self._scale(cycle)
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, high - (high - low) * rise * scale)
        return [low + (high - low) * rise * scale for low, high in zip(self.base_lrs, self.max_lrs)]

    def state_dict(self) -> dict:
        """Attributes except the optimizer; a custom scale_fn only as a callable object's
        attributes (plain functions can't be saved)."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "scale_fn_custom")}
        fn = self.scale_fn_custom
        state["scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) \
            else dict(fn.__dict__)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        attributes = state.pop("scale_fn_custom")
        self.__dict__.update(state)
        if attributes is not None:
            self.scale_fn_custom.__dict__.update(attributes)


def _momentum_range(owner: str, optimizer: Optimizer, base_momentum, max_momentum) -> tuple:
    """(whether Adam-style beta1 is the momentum, base momentums, max momentums) per group."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{owner}: cycle_momentum needs an optimizer with momentum or betas; "
                         "pass cycle_momentum=False")
    return ("betas" in optimizer.defaults, per_group("base_momentum", optimizer, base_momentum),
            per_group("max_momentum", optimizer, max_momentum))
