"""Helpers shared by the distributions: parameters broadcast to one shape, probabilities to
logits and back, and noise drawn on a parameter's device in its dtype."""
from __future__ import annotations

import numbers

from ..creation import tensor as make_tensor
from ..dtypes import finfo
from ..ops.composites import broadcast_tensors
from ..ops.softmax import softmax
from ..random import generator_for
from ..tensor import Tensor, wrap_array

__all__ = ["broadcast_all", "clamp_probs", "draw", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values) -> tuple:
    """The values as tensors of one shape; numbers become tensors of the first tensor's dtype
    (the default dtype when there is none), as PyTorch's `broadcast_all`.

    >>> [tuple(t.shape) for t in broadcast_all(0.0, make_tensor([1.0, 2.0]))]
    [(2,), (2,)]
    """
    for value in values:
        if not isinstance(value, (Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number or "
                             f"genesis.Tensor, got {type(value).__name__}")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype, device = (None, None) if like is None else (like.dtype, like._device)
    return broadcast_tensors(*(v if isinstance(v, Tensor) else make_tensor(float(v), dtype=dtype, device=device)
                               for v in values))


def clamp_probs(probs: Tensor) -> Tensor:
    """`probs` kept eps away from 0 and 1, so that their logs are finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p (categorical), or log p - log(1 - p) (binary)."""
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dimension (categorical)."""
    return logits.sigmoid() if is_binary else softmax(logits, -1)


def require_probs_or_logits(probs, logits) -> None:
    """PyTorch's ValueError unless exactly one of `probs` and `logits` is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def binary_parameters(probs, logits, *others) -> tuple:
    """(`others`..., probs, logits) of a family of one success probability (Bernoulli,
    Geometric, Binomial) given as `probs` or as `logits`, broadcast with `others`.

    >>> import genesis
    >>> count, probs, logits = binary_parameters(None, genesis.tensor([0.0, 2.0]), 3)
    >>> count.tolist(), [round(p, 4) for p in probs.tolist()]
    ([3.0, 3.0], [0.5, 0.8808])
    """
    require_probs_or_logits(probs, logits)
    if probs is not None:
        *others, probs = broadcast_all(*others, probs)
        return (*others, probs, probs_to_logits(probs, is_binary=True))
    *others, logits = broadcast_all(*others, logits)
    return (*others, logits_to_probs(logits, is_binary=True), logits)


def draw(like: Tensor, method: str, shape: tuple, *args):
    """A tensor of `shape` drawn by the device generator's `method` (`standard_normal`,
    `random`, ...), in `like`'s dtype and on its device; no gradient."""
    drawn = getattr(generator_for(like._device), method)(*args, size=shape)
    return wrap_array(like._device.xp.asarray(drawn).astype(like._data.dtype), like._device)
