"""Loss modules over `genesis.nn._multi_margin_losses` and `genesis.nn._ctc_loss`:
MultiMarginLoss, MultiLabelMarginLoss, TripletMarginWithDistanceLoss, CTCLoss.

>>> import genesis
>>> genesis.nn.MultiMarginLoss()(genesis.tensor([[0.1, 0.2, 0.4, 0.8]]), genesis.tensor([3]))
tensor(0.3250)
"""
from __future__ import annotations

from typing import Callable

from ..tensor import Tensor
from . import _multi_margin_losses as L
from ._ctc_loss import ctc_loss
from .composite_layers import PairwiseDistance
from .loss import _Loss, _WeightedLoss

__all__ = ["MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss; see `genesis.nn.functional.multi_margin_loss`."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be one-dimensional (one per class), "
                             f"got shape {tuple(weight.shape)}")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss; see `genesis.nn.functional.multilabel_margin_loss`.

    >>> import genesis
    >>> genesis.nn.MultiLabelMarginLoss()(genesis.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                   genesis.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with any distance; see
    `genesis.nn.functional.triplet_margin_with_distance_loss`.

    >>> import genesis
    >>> distance = genesis.nn.PairwiseDistance(p=1)
    >>> loss = genesis.nn.TripletMarginWithDistanceLoss(distance_function=distance)
    >>> loss(genesis.zeros(2, 3), genesis.zeros(2, 3), genesis.ones(2, 3)).item() < 1
    True
    """

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                             f"0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else \
            PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss; see `genesis.nn.functional.ctc_loss`.

    >>> import genesis
    >>> log_probs = genesis.randn(6, 2, 5).log_softmax(2)
    >>> genesis.nn.CTCLoss()(log_probs, genesis.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).shape
    genesis.Size([])
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
