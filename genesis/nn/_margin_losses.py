"""Margin, embedding and likelihood losses, as compositions of genesis ops (their gradients
are those ops'), with PyTorch's formulas: cosine_embedding_loss, margin_ranking_loss,
hinge_embedding_loss, triplet_margin_loss, soft_margin_loss, multilabel_soft_margin_loss,
gaussian_nll_loss, poisson_nll_loss; and gumbel_softmax."""
from __future__ import annotations

import math

from ..autocast_rules import FLOAT32
from ..autograd.autocast_casts import autocast_inputs
from ..ops.composites import xlogy
from ..ops.smooth_activation import softplus
from ..ops.softmax import softmax
from ..ops.where import where
from ..random import generator_for
from ..tensor import Tensor, wrap_array
from ._composite_functions import logsigmoid, pairwise_distance
from ._pointwise_losses import reduce_loss

__all__ = ["cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "triplet_margin_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "gaussian_nll_loss", "poisson_nll_loss", "gumbel_softmax"]

_EPSILON = 1e-12  # added to the squared norms in cosine_embedding_loss, as in PyTorch


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    return "none" if reduce is False else "sum" if size_average is False else "mean"


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1; max(0, cos(x1, x2) - margin) where it is -1."""
    input1, input2, target = autocast_inputs(FLOAT32, input1, input2, target)
    dim = input1.ndim - 1
    products = (input1 * input2).sum(dim)
    magnitudes = ((input1 * input1).sum(dim) + _EPSILON) * ((input2 * input2).sum(dim) + _EPSILON)
    cosine = products / magnitudes.sqrt()
    loss = where(target == 1, 1 - cosine, 0.0) + where(target == -1, (cosine - margin).clamp(min=0), 0.0)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "cosine_embedding_loss")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (x1 - x2) + margin)."""
    input1, input2, target = autocast_inputs(FLOAT32, input1, input2, target)
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "margin_ranking_loss")


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """x where target is 1; max(0, margin - x) where it is -1."""
    input, target = autocast_inputs(FLOAT32, input, target)
    loss = where(target != -1, input, 0.0) + where(target != 1, (margin - input).clamp(min=0), 0.0)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "hinge_embedding_loss")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, d(anchor, positive) - d(anchor, negative) + margin), d the p-norm distance
    (with `swap`, the smaller of d(anchor, negative) and d(positive, negative)). The margin
    must be positive, as in PyTorch's `F.triplet_margin_loss` (`torch.triplet_margin_loss`,
    `triplet_margin_loss_unchecked` here, takes any)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    return triplet_margin_loss_unchecked(anchor, positive, negative, margin, p, eps, swap,
                                         size_average, reduce, reduction)


def triplet_margin_loss_unchecked(anchor: Tensor, positive: Tensor, negative: Tensor,
                                  margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                                  swap: bool = False, size_average=None, reduce=None,
                                  reduction: str = "mean") -> Tensor:
    """`triplet_margin_loss` for any margin, zero and negative ones too."""
    anchor, positive, negative = autocast_inputs(FLOAT32, anchor, positive, negative)
    positive_distance = pairwise_distance(anchor, positive, p, eps)
    negative_distance = pairwise_distance(anchor, negative, p, eps)
    if swap:
        other = pairwise_distance(positive, negative, p, eps)
        negative_distance = where(other < negative_distance, other, negative_distance)
    loss = (margin + positive_distance - negative_distance).clamp(min=0)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "triplet_margin_loss")


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input))."""
    input, target = autocast_inputs(FLOAT32, input, target)
    loss = softplus(-target * input)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "soft_margin_loss")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """The binary cross entropy of each class's logit, averaged over the classes."""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction),
                       "multilabel_soft_margin_loss")


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """The negative log likelihood of `target` under N(input, var): 0.5 (log var +
    (input - target)² / var) (+ 0.5 log 2π when `full`). var below eps counts as eps, its
    gradient passing on unchanged, as in PyTorch."""
    if not isinstance(var, Tensor):
        var = wrap_array(input._device.xp.full(input.shape, float(var), input._data.dtype), input._device)
    if var.ndim == input.ndim - 1 or (var.ndim == input.ndim and var.shape[-1] == 1 and input.shape[-1] != 1):
        var = var.reshape(tuple(var.shape[:input.ndim - 1]) + (1,))
    if (var._data < 0).any():
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    clamped = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction, "gaussian_nll_loss")


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """The Poisson negative log likelihood: exp(input) - target * input for log-rates, else
    input - target * log(input + eps); `full` adds Stirling's term where target > 1, masked
    as PyTorch's: the term's own gradient still reaches the target, nan where it is 0."""
    input, target = autocast_inputs(FLOAT32, input, target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = xlogy(target, target) - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, _legacy_reduction(size_average, reduce, reduction), "poisson_nll_loss")


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: softmax((logits + Gumbel noise) / tau);
    with `hard`, the one-hot of its largest entry that passes the soft sample's gradient
    (the straight-through estimator)."""
    draws = generator_for(logits._device).exponential(1.0, logits.shape).astype(logits._data.dtype)
    gumbels = -wrap_array(logits._device.xp.log(draws), logits._device)
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    xp = logits._device.xp
    index = xp.expand_dims(soft._data.argmax(axis=dim), dim)
    onehot = xp.zeros_like(soft._data)
    xp.put_along_axis(onehot, index, 1, dim)
    return wrap_array(onehot, logits._device) - soft.detach() + soft
