"""Learning-rate schedulers, computing the same values as `torch.optim.lr_scheduler`.

A scheduler sets `group["lr"]` of its optimizer's groups at construction
(step 0) and at each `step()`; most use PyTorch's recursive ("chainable")
formulas so that the floating point values match PyTorch's exactly.

>>> import genesis
>>> w = genesis.zeros(1, requires_grad=True)
>>> optimizer = genesis.optim.SGD([w], lr=1.0)
>>> scheduler = genesis.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     lrs.append(scheduler.get_last_lr()[0]); optimizer.step(); scheduler.step()
>>> lrs
[1.0, 1.0, 0.5, 0.5, 0.25]
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "LinearLR", "OneCycleLR", "CyclicLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau",
           "get_cosine_schedule_with_warmup"]


class LRScheduler:
    """Base class: subclasses implement `get_lr()` (the lrs for `self.last_epoch`)."""

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                                   "when resuming a scheduler with last_epoch >= 0; load the "
                                   "optimizer's state dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step a scheduler makes when it starts (at construction, or in SequentialLR)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def step(self) -> None:
        """Advance one step (call after `optimizer.step()`) and set the new lrs."""
        self._step_count += 1
        self._jump_to(None)

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
            group["lr"] = lr
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
        self.lr_lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
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


class ConstantLR(LRScheduler):
    """Scale the lr by `factor` for the first `total_iters` steps, then back to the base lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _closed_form(self) -> list:
        scale = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * scale for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr to 0 over `total_iters` steps as (1 - epoch / total_iters) ** power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * decay for lr in self._current_lrs()]

    def _closed_form(self) -> list:
        left = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [base_lr * left for base_lr in self.base_lrs]


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _closed_form(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each epoch listed in `milestones`."""

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current_lrs()]

    def _closed_form(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every step."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _closed_form(self) -> list:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed recursively."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self._current_lrs()
        if self._is_initial:
            return groups
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
                * (lr - eta_min) + eta_min for lr in groups]

    def _closed_form(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from `start_factor` to `end_factor` over `total_iters` steps."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if not 0 < start_factor <= 1:
            raise ValueError(f"start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self._current_lrs()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return groups
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * factor for lr in groups]

    def _closed_form(self) -> list:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)
                for base_lr in self.base_lrs]


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
        max_lrs = _per_group("max_lr", optimizer, max_lr)
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
            group["lr"] = lr
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
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
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
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:  # undo the step each made at construction
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one step; at a milestone the next scheduler starts at its epoch 0."""
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
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self, metrics) -> None:
        """Record this epoch's metric (a number or a one-element tensor) and reduce the lrs
        if it has plateaued."""
        current = float(metrics)
        self.last_epoch += 1
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
                    group["lr"] = new
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


def _momentum_range(owner: str, optimizer: Optimizer, base_momentum, max_momentum) -> tuple:
    """(whether Adam-style beta1 is the momentum, base momentums, max momentums) per group."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{owner}: cycle_momentum needs an optimizer with momentum or betas; "
                         "pass cycle_momentum=False")
    return ("betas" in optimizer.defaults, _per_group("base_momentum", optimizer, base_momentum),
            _per_group("max_momentum", optimizer, max_momentum))


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    groups = len(optimizer.param_groups)
    if isinstance(value, list | tuple):
        if len(value) != groups:
            raise ValueError(f"expected {groups} values for {name}, got {len(value)}")
        return list(value)
    return [value] * groups


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
