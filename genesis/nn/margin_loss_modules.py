"""Loss modules over `genesis.nn._margin_losses`: CosineEmbeddingLoss, MarginRankingLoss,
HingeEmbeddingLoss, TripletMarginLoss, SoftMarginLoss, MultiLabelSoftMarginLoss,
GaussianNLLLoss, PoissonNLLLoss."""
from __future__ import annotations

from ..tensor import Tensor
from . import _margin_losses as L
from .loss import _Loss, _WeightedLoss

__all__ = ["CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "TripletMarginLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss"]


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for similar pairs (target 1), max(0, cos - margin) for others (-1)."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (x1 - x2) + margin)."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """x for target 1, max(0, margin - x) for target -1."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """max(0, d(anchor, positive) - d(anchor, negative) + margin)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                     self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input))."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class binary cross entropy of logits, averaged over classes."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """The negative log likelihood of targets under N(input, var)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return L.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(_Loss):
    """The Poisson negative log likelihood of targets given (log-)rates."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return L.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                  reduction=self.reduction)
