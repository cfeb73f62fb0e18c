"""The averaging rules `AveragedModel` applies, as PyTorch's `torch.optim.swa_utils` builds
them: an equal-weight average of every model seen (SWA) or an exponential moving average
(EMA), each as a one-tensor `avg_fn` (returns the new average) or as a `multi_avg_fn` that
updates a list of averaged tensors in place.

Each is called as `fn(averaged, current, num_averaged)`, where `num_averaged` counts the
models already averaged, and runs under `no_grad`.

>>> import genesis
>>> swa = get_swa_avg_fn()
>>> swa(genesis.tensor([2.0]), genesis.tensor([5.0]), 2)   # (2 + 2 + 5) / 3
tensor([3.])
>>> averaged = [genesis.tensor([0.0])]
>>> get_ema_multi_avg_fn(0.75)(averaged, [genesis.tensor([4.0])], 1)
>>> averaged
[tensor([1.])]
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.tensor_info import is_complex, is_floating_point
from ...tensor import Tensor

__all__ = ["get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


def _interpolates(tensors: list) -> bool:
    """Whether a group of averaged tensors (one dtype) is updated with `lerp_`, which takes
    floating point and complex tensors only; integer buffers take the plain formula."""
    return is_floating_point(tensors[0]) or is_complex(tensors[0])


def get_ema_multi_avg_fn(decay=0.999):
    """The in-place EMA over lists of tensors: each averaged tensor becomes
    `decay * averaged + (1 - decay) * current`. `decay` must lie in [0, 1] (ValueError).

    >>> import genesis
    >>> averaged = [genesis.tensor([1.0, 2.0])]
    >>> get_ema_multi_avg_fn(0.5)(averaged, [genesis.tensor([3.0, 4.0])], 1)
    >>> averaged[0]
    tensor([2., 3.])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(averaged: list, current: list, num_averaged) -> None:
        if _interpolates(averaged):
            for average, value in zip(averaged, current, strict=True):
                average.lerp_(value, 1 - decay)
        else:
            for average, value in zip(averaged, current, strict=True):
                average.copy_(average * decay + value * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The in-place equal-weight average over lists of tensors: each averaged tensor moves
    `1 / (num_averaged + 1)` of the way to the current one.

    >>> import genesis
    >>> averaged = [genesis.tensor([2.0])]
    >>> get_swa_multi_avg_fn()(averaged, [genesis.tensor([8.0])], 2)
    >>> averaged[0]
    tensor([4.])
    """

    @no_grad()
    def swa_update(averaged: list, current: list, num_averaged) -> None:
        if _interpolates(averaged):
            weight = 1 / (num_averaged + 1)
            for average, value in zip(averaged, current, strict=True):
                average.lerp_(value, weight)
            return
        differences = [value - average for average, value in zip(averaged, current, strict=True)]
        for average, difference in zip(averaged, differences):
            if isinstance(num_averaged, Tensor):  # integer addcdiv_ refuses, as in PyTorch
                average.addcdiv_(difference, num_averaged + 1)
            else:
                average.add_(difference, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one tensor: returns `decay * averaged + (1 - decay) * current`. `decay`
    must lie in [0, 1] (ValueError).

    >>> import genesis
    >>> get_ema_avg_fn(0.9)(genesis.tensor([10.0]), genesis.tensor([0.0]), 3)
    tensor([9.])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn():
    """The equal-weight average of one tensor: returns
    `averaged + (current - averaged) / (num_averaged + 1)`.

    >>> import genesis
    >>> get_swa_avg_fn()(genesis.tensor([1.0]), genesis.tensor([4.0]), 2)
    tensor([2.])
    """

    @no_grad()
    def swa_update(averaged, current, num_averaged):
        return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update
