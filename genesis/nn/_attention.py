"""Functional attention: `scaled_dot_product_attention` and the masked softmax attention that
`MultiheadAttention` builds on, composed from differentiable ops; the registry entry (`OPS`)."""
from __future__ import annotations

import math

import numpy as np

from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..ops.softmax import softmax
from ..tensor import Tensor, wrap_array
from ._layers import dropout

__all__ = ["scaled_dot_product_attention"]


def additive_mask(mask: Tensor | None, dtype, name: str) -> Tensor | None:
    """A mask to add to attention scores: bool masks (True = may not attend) become 0/-inf,
    float masks are used as given."""
    if mask is None:
        return None
    if mask._data.dtype == np.bool_:
        xp = mask._device.xp
        return wrap_array(xp.where(mask._data, -xp.inf, 0.0).astype(dtype), mask.device)
    if not mask.is_floating_point():
        raise TypeError(f"{name} must be a bool or floating point tensor, got {mask.dtype!r}")
    return mask


def causal_mask(target_length: int, source_length: int, like: Tensor) -> Tensor:
    """0 on and below the diagonal, -inf above (position i may attend to j <= i)."""
    xp = like._device.xp
    upper = xp.triu(xp.ones((target_length, source_length), dtype=bool), k=1)
    return wrap_array(xp.where(upper, -xp.inf, 0.0).astype(like._data.dtype), like.device)


def attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float,
              training: bool, scale: float | None = None, split_scale: bool = False) -> tuple:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims; returns the output
    and the attention weights (after dropout, as PyTorch's MultiheadAttention returns them).

    `split_scale` scales both sides by sqrt(scale), as PyTorch's scaled_dot_product_attention
    (its math kernel): the product then keeps no view of the key itself, and an in-place write
    to the key after the forward leaves the backward free to run, as there."""
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if split_scale and scale > 0:
        root = math.sqrt(scale)
        scores = (query * root) @ (key.transpose(-2, -1) * root)
    else:
        scores = (query * scale) @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training)
    return weights @ value, weights


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Tensor:
    """softmax(Q K^T / sqrt(d) + mask) V for inputs of shape (..., L, d), (..., S, d), (..., S, dv).

    `attn_mask` is bool (True = may attend, as in PyTorch's SDPA) or additive float;
    `is_causal` masks out future positions.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> q = k = v = genesis.eye(2).reshape(1, 2, 2)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True)
    tensor([[[1.0000, 0.0000],
             [0.3302, 0.6698]]])
    """
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2 or query.shape[-1] != key.shape[-1] \
            or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {tuple(query.shape)}, key "
                           f"{tuple(key.shape)} and value {tuple(value.shape)} must be (..., L, d), "
                           "(..., S, d) and (..., S, dv)")
    mask = None
    if attn_mask is not None:
        if attn_mask._data.dtype == np.bool_:  # SDPA's bool masks mark the allowed positions
            attn_mask = wrap_array(~attn_mask._data, attn_mask.device)
        mask = additive_mask(attn_mask, query._data.dtype, "attn_mask")
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: pass either attn_mask or "
                               "is_causal=True, not both")
        mask = causal_mask(query.shape[-2], key.shape[-2], query)
    output, _ = attention(query, key, value, mask, dropout_p, True, scale, split_scale=True)
    return output


def _attention_samples(rng):
    def qkv(batch=(2,), target=3, source=5, depth=4, value_depth=6):
        return (values(rng, batch + (target, depth)), values(rng, batch + (source, depth)),
                values(rng, batch + (source, value_depth)))

    allowed = rng.random((3, 5)) < 0.7
    allowed[:, 0] = True  # every query may attend somewhere: no row of -inf alone
    return [
        Sample(qkv(), note="(N, L, d)"),
        Sample(qkv((2, 2)), note="batch and heads"),
        Sample(qkv(()), note="unbatched"),
        Sample(qkv(source=3), {"is_causal": True}, note="causal"),
        Sample(qkv() + (allowed,), note="bool mask"),
        Sample(qkv() + (values(rng, (3, 5)),), grad=(True, True, True, False),
               note="float mask"),
        Sample(qkv(), {"scale": 0.3}, note="scale 0.3"),
        Sample(qkv(), grad=(True, False, True), note="key needs no grad"),
        Sample(qkv(), grad=(False, False, True), note="only the value needs grad"),
        Sample(qkv((2,), 3, 3, 3, 3), layout="transposed", note="transposed"),
        Sample(qkv(), layout="strided", note="strided"),
    ]


OPS = [
    OpInfo("scaled_dot_product_attention", scaled_dot_product_attention, _attention_samples,
           torch=lambda torch, *args, **kw:
           torch.nn.functional.scaled_dot_product_attention(*args, **kw)),
]
