"""`MultiheadAttention`, with PyTorch's parameter names (so its state dicts load)."""
from __future__ import annotations

from ..creation import empty, zeros
from ..tensor import Tensor
from . import init
from ._attention import additive_mask, attention, causal_mask
from ._layers import linear
from .linear import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over `num_heads` heads of size embed_dim / num_heads, as `torch.nn.MultiheadAttention`.

    Inputs are (L, N, E) (or (N, L, E) with `batch_first`, or unbatched (L, E)).
    `forward` returns (output, weights averaged over heads, or None with need_weights=False).
    Masks: `key_padding_mask` (N, S) and `attn_mask` (L, S) or (N * num_heads, L, S), bool
    (True = may not attend) or additive float.

    >>> import genesis
    >>> attention = genesis.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = genesis.randn(3, 5, 8)
    >>> output, weights = attention(x, x, x)
    >>> output.shape, weights.shape
    (genesis.Size([3, 5, 8]), genesis.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.batch_first = batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        factory = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", Parameter(zeros(3 * embed_dim, **factory))
                                if bias else None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **factory)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _projections(self, query: Tensor, key: Tensor, value: Tensor, packed: bool) -> tuple:
        embed = self.embed_dim
        # Split, not three slices: one node whose backward joins the pieces' gradients in one
        # pass (three slices would each scatter into zeros of the whole, then be added).
        if packed:  # self-attention: one projection for q, k and v
            return linear(query, self.in_proj_weight, self.in_proj_bias).split(embed, dim=-1)
        biases = (None, None, None) if self.in_proj_bias is None else self.in_proj_bias.split(embed)
        if self._qkv_same_embed_dim:
            weights = self.in_proj_weight.split(embed)
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.reshape(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def _batch_first(self, x: Tensor, batched: bool) -> Tensor:
        if not batched:
            return x.unsqueeze(0)
        return x if self.batch_first else x.transpose(0, 1)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple:
        batched = query.ndim == 3
        packed = self._qkv_same_embed_dim and query is key and key is value
        if not batched and key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
        query, key, value = (self._batch_first(x, batched) for x in (query, key, value))
        q, k, v = self._projections(query, key, value, packed)
        batch, target_length, source_length = q.shape[0], q.shape[1], k.shape[1]
        mask = self._combined_mask(attn_mask, key_padding_mask, is_causal, batch, target_length,
                                   source_length, q)
        output, weights = attention(self._split_heads(q), self._split_heads(k), self._split_heads(v),
                                    mask, self.dropout, self.training)
        output = self.out_proj(output.transpose(1, 2).reshape(batch, target_length, self.embed_dim))
        if not batched:
            output = output.squeeze(0)
        elif not self.batch_first:
            output = output.transpose(0, 1)
        if not need_weights:
            return output, None
        if average_attn_weights:
            weights = weights.mean(1)
        return output, weights if batched else weights.squeeze(0)

    def _combined_mask(self, attn_mask, key_padding_mask, is_causal, batch, target_length,
                       source_length, like: Tensor):
        dtype = like._data.dtype
        mask = additive_mask(attn_mask, dtype, "attn_mask")
        if mask is None and is_causal:
            mask = causal_mask(target_length, source_length, like)
        if mask is not None and mask.ndim == 3:  # (N * num_heads, L, S)
            mask = mask.reshape(batch, self.num_heads, target_length, source_length)
        padding = additive_mask(key_padding_mask, dtype, "key_padding_mask")
        if padding is not None:
            if tuple(padding.shape) != (batch, source_length):
                raise RuntimeError(f"key_padding_mask has shape {tuple(padding.shape)}, expected "
                                   f"(batch, source length) = {(batch, source_length)}")
            padding = padding.reshape(batch, 1, 1, source_length)
            mask = padding if mask is None else mask + padding
        return mask

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"
