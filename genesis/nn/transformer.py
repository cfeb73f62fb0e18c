"""`TransformerEncoderLayer`, `TransformerEncoder`, `TransformerDecoderLayer`,
`TransformerDecoder` and `Transformer`, as in PyTorch (same submodule names, masks and
initialisation)."""
from __future__ import annotations

import copy

from ..creation import full
from ..tensor import Tensor
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .containers import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual connection and
    LayerNorm (after each block, or before with `norm_first`).

    >>> import genesis
    >>> layer = genesis.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                            batch_first=True)
    >>> layer(genesis.randn(3, 5, 8)).shape
    genesis.Size([3, 5, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        _build_layer(self, ("self_attn",), 2, d_model, nhead, dim_feedforward, dropout, activation,
                     layer_norm_eps, batch_first, norm_first, bias, dict(device=device, dtype=dtype))

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._attention_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward_block(self.norm2(x))
        x = self.norm1(x + self._attention_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward_block(x))

    def _attention_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        output = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal and attn_mask is None)[0]
        return self.dropout1(output)

    def _feed_forward_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """`num_layers` independent copies of `encoder_layer` applied in turn, then `norm` if given.

    `enable_nested_tensor` and `mask_check` are accepted and kept as PyTorch keeps them;
    they steer PyTorch's inference fast path (nested tensors for padded batches, and a check
    of the padding mask for it), which genesis does not have, so `use_nested_tensor` is
    always False and every input takes the ordinary path.

    >>> import genesis
    >>> layer = genesis.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> encoder = genesis.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    >>> encoder(genesis.zeros(1, 3, 8)).shape
    genesis.Size([1, 3, 8])
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True):
        super().__init__()
        self.layers = ModuleList(copy.deepcopy(encoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=is_causal)
        return self.norm(output) if self.norm is not None else output


def _build_layer(layer: Module, attentions: tuple, blocks: int, d_model: int, nhead: int,
                 dim_feedforward: int, dropout: float, activation, layer_norm_eps: float,
                 batch_first: bool, norm_first: bool, bias: bool, factory: dict) -> None:
    """Give an encoder or decoder layer its submodules, named and ordered as in PyTorch: the
    `attentions`, the feed-forward pair, and a LayerNorm and a Dropout per residual block."""
    for name in attentions:
        setattr(layer, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                batch_first=batch_first, **factory))
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    layer.norm_first = norm_first
    for number in range(1, blocks + 1):
        setattr(layer, f"norm{number}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
    for number in range(1, blocks + 1):
        setattr(layer, f"dropout{number}", Dropout(dropout))
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        activation = _ACTIVATIONS[activation]
    layer.activation = activation


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over the encoder's `memory`, then a
    feed-forward block; each with dropout, a residual connection and LayerNorm (after each
    block, or before with `norm_first`).

    >>> import genesis
    >>> layer = genesis.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                            batch_first=True)
    >>> layer(genesis.randn(3, 4, 8), genesis.randn(3, 6, 8)).shape
    genesis.Size([3, 4, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        _build_layer(self, ("self_attn", "multihead_attn"), 3, d_model, nhead, dim_feedforward,
                     dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
                     dict(device=device, dtype=dtype))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._memory_attention(self.norm2(x), memory, memory_mask,
                                           memory_key_padding_mask, memory_is_causal)
            return x + self._feed_forward_block(self.norm3(x))
        x = self.norm1(x + self._self_attention(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._memory_attention(x, memory, memory_mask, memory_key_padding_mask,
                                                  memory_is_causal))
        return self.norm3(x + self._feed_forward_block(x))

    def _self_attention(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        output = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal and attn_mask is None)[0]
        return self.dropout1(output)

    def _memory_attention(self, x, memory, attn_mask, key_padding_mask, is_causal) -> Tensor:
        output = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                     key_padding_mask=key_padding_mask, need_weights=False,
                                     is_causal=is_causal and attn_mask is None)[0]
        return self.dropout2(output)

    def _feed_forward_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """`num_layers` independent copies of `decoder_layer` applied in turn, each attending to
    the same `memory`, then `norm` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None):
        super().__init__()
        self.layers = ModuleList(copy.deepcopy(decoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """The encoder-decoder model of "Attention is all you need": `num_encoder_layers` encoder
    layers and `num_decoder_layers` decoder layers, each stack ending in a LayerNorm; every
    weight matrix drawn with xavier_uniform_, as in PyTorch.

    >>> import genesis
    >>> model = genesis.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                                num_decoder_layers=1, dim_feedforward=16, batch_first=True)
    >>> mask = genesis.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(genesis.randn(2, 6, 8), genesis.randn(2, 4, 8), tgt_mask=mask).shape
    genesis.Size([2, 4, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        layer_options = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                             activation=activation, layer_norm_eps=layer_norm_eps,
                             batch_first=batch_first, norm_first=norm_first, bias=bias, **factory)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **layer_options), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **layer_options), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool = False,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"Transformer: the batch sizes of src {tuple(src.shape)} and tgt "
                               f"{tuple(tgt.shape)} must be equal (dim {batch_dim})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature size of src and tgt must be d_model="
                               f"{self.d_model}, got {src.shape[-1]} and {tgt.shape[-1]}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The causal mask for `sz` positions: -inf above the diagonal (the future), 0 elsewhere.

        >>> import genesis
        >>> genesis.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
