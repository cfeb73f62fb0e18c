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
from .base import LRScheduler
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .epoch_schedules import (ConstantLR, CosineAnnealingLR, ExponentialLR, LinearLR, MultiStepLR,
                              PolynomialLR, StepLR)
from .lambda_lr import LambdaLR, MultiplicativeLR, get_cosine_schedule_with_warmup
from .lambda_lr import _WarmupCosine  # noqa: F401  (the schedule's callable; tests build it directly)
from .plateau import ReduceLROnPlateau
from .sequential import ChainedScheduler, SequentialLR

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "LinearLR", "OneCycleLR", "CyclicLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau",
           "get_cosine_schedule_with_warmup"]

