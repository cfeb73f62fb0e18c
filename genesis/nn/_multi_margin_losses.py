"""Multi-class and multi-label hinge losses and the triplet loss with a distance of one's
choosing, as compositions of genesis ops (their gradients are those ops'), with PyTorch's
formulas and argument checks: multi_margin_loss, multilabel_margin_loss,
triplet_margin_with_distance_loss."""
from __future__ import annotations

import math
from typing import Callable

from ..autocast_rules import FLOAT32
from ..autograd.autocast_casts import autocast_inputs
from ..ops.where import where
from ..tensor import Tensor, wrap_array
from ._composite_functions import pairwise_distance
from ._margin_losses import _legacy_reduction
from ._pointwise_losses import reduce_loss

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]


def _hinge(z: Tensor) -> Tensor:
    """max(0, z) with no gradient where z is exactly 0 (PyTorch's kernels test z > 0)."""
    return where(z > 0, z, 0.0)


def _as_batch(op: str, input: Tensor, target: Tensor, target_dims: int) -> tuple:
    """input as (N, C) and target as (N,) (target_dims 1) or (N, C) (target_dims 2)."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{op}: input and target must be Tensors, got {type(input).__name__} and "
                        f"{type(target).__name__}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise RuntimeError(f"{op}: expected a non-empty 1-D (C) or 2-D (N, C) input, got shape "
                           f"{tuple(input.shape)}")
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: target must hold class indices (an integer tensor), got "
                           f"{target.dtype.name}")
    batch = input.unsqueeze(0) if input.ndim == 1 else input
    expected = tuple(batch.shape[:target_dims])
    if target.numel() != math.prod(expected):
        raise RuntimeError(f"{op}: inconsistent target size: {tuple(target.shape)} for input of "
                           f"size: {tuple(input.shape)}")
    return batch, target.reshape(expected)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss of (N, C) scores and (N,) classes y: the sum over j != y of
    max(0, margin - x[y] + x[j])^p (times weight[y]), divided by C; p is 1 or 2.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.multi_margin_loss(genesis.tensor([[0.1, 0.2, 0.4, 0.8]]), genesis.tensor([3]))
    tensor(0.3250)
    """
    input, target, weight = autocast_inputs(FLOAT32, input, target, weight)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 supported, got p={p}")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"multi_margin_loss: weight must be one-dimensional (one per class), "
                         f"got shape {tuple(weight.shape)}")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    scores, classes = _as_batch("multi_margin_loss", input, target, 1)
    count = scores.shape[1]
    data = classes._data
    if data.size and (bool((data < 0).any()) or int(data.max()) >= count):
        raise RuntimeError(f"multi_margin_loss: target out of range: classes must lie in [0, "
                           f"{count})")
    column = classes.unsqueeze(1)
    terms = _hinge(margin - scores.gather(1, column) + scores)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight[classes].unsqueeze(1)
    xp = scores._device.xp
    own = wrap_array(xp.arange(count) == data[:, None], scores._device)
    loss = where(own, 0.0, terms).sum(1) / count
    if input.ndim == 1:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss: target (N, C) lists each row's classes, ended by the first
    -1; the loss is the sum over listed classes j and unlisted classes k of
    max(0, 1 - (x[j] - x[k])), divided by C.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.multilabel_margin_loss(genesis.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                          genesis.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    input, target = autocast_inputs(FLOAT32, input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    scores, labels = _as_batch("multilabel_margin_loss", input, target, 2)
    xp, device = scores._device.xp, scores._device
    count = scores.shape[1]
    data = labels._data
    if data.size and (bool((data < -1).any()) or int(data.max()) >= count):
        raise RuntimeError(f"multilabel_margin_loss: target out of range: entries must lie in "
                           f"[-1, {count}) (-1 ends a row's classes)")
    listed = xp.cumprod(data >= 0, axis=1).astype(bool)  # the entries before the first -1
    chosen = xp.where(listed, data, 0)
    is_target = xp.zeros(data.shape, bool)
    rows = xp.broadcast_to(xp.arange(data.shape[0])[:, None], data.shape)
    is_target[rows[listed], chosen[listed]] = True
    picked = scores.gather(1, wrap_array(chosen, device))
    pairs = wrap_array(listed[:, :, None] & ~is_target[:, None, :], device)
    terms = _hinge(1 - picked.unsqueeze(2) + scores.unsqueeze(1))
    loss = where(pairs, terms, 0.0).sum((1, 2)) / count
    if input.ndim == 1:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction, "multilabel_margin_loss")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(0, d(anchor, positive) - d(anchor, negative) + margin) for any distance d
    (default: pairwise_distance); with `swap`, d(anchor, negative) is replaced by
    d(positive, negative) where that is smaller.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> a, p, n = genesis.zeros(1, 2), genesis.ones(1, 2), genesis.zeros(1, 2)
    >>> manhattan = lambda x, y: (x - y).abs().sum(1)
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=manhattan)
    tensor(3.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"triplet_margin_with_distance_loss: {reduction} is not a valid value "
                         "for reduction; use 'mean', 'sum' or 'none'")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, "
                         f"got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_with_distance_loss: the anchor, positive, and "
                           f"negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:
        other = distance(positive, negative)
        negative_distance = where(other < negative_distance, other, negative_distance)
    loss = (margin + positive_distance - negative_distance).clamp(min=0)
    return reduce_loss(loss, reduction, "triplet_margin_with_distance_loss")

