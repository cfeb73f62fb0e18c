"""`MultiheadAttention`, with PyTorch's parameter names (so its state dicts load)."""
from __future__ import annotations

from ..creation import empty, zeros
from ..ops.join import cat
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
    (True = may not attend) or additive float. `add_bias_kv`: a learnt key and value
    (`bias_k`, `bias_v`, each (1, 1, embed_dim)) appended to the keys and values;
    `add_zero_attn`: a key and value of zeros appended per head. Each adds one source position,
    which every query may attend to (the masks are extended with "may attend").

    >>> import genesis
    >>> attention = genesis.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = genesis.randn(3, 5, 8)
    >>> output, weights = attention(x, x, x)
    >>> output.shape, weights.shape
    (genesis.Size([3, 5, 8]), genesis.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
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
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **factory))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None  # plain attributes, as in PyTorch
        self.add_zero_attn = add_zero_attn
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
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

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
        k, v = self._split_heads(k), self._split_heads(v)
        if self.bias_k is not None:
            k, v = self._appended(k, self._split_heads(self.bias_k.expand(batch, 1, -1)),
                                  v, self._split_heads(self.bias_v.expand(batch, 1, -1)))
        if self.add_zero_attn:
            nothing = zeros(batch, self.num_heads, 1, self.head_dim, dtype=k.dtype, device=k.device)
            k, v = self._appended(k, nothing, v, nothing)
        mask = _attendable(mask, k.shape[2] - source_length)
        output, weights = attention(self._split_heads(q), k, v, mask, self.dropout, self.training)
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

    @staticmethod
    def _appended(k: Tensor, extra_key: Tensor, v: Tensor, extra_value: Tensor) -> tuple:
        """Keys and values (batch, heads, source, head_dim) with one more source position."""
        return cat([k, extra_key], dim=2), cat([v, extra_value], dim=2)

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


def _attendable(mask: Tensor | None, extra: int) -> Tensor | None:
    """An additive mask with `extra` source positions appended that every query may attend to."""
    if mask is None or not extra:
        return mask
    return cat([mask, zeros(*mask.shape[:-1], extra, dtype=mask.dtype, device=mask.device)], dim=-1)
