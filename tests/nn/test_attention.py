"""Attention: scaled_dot_product_attention, MultiheadAttention and the Transformer layers against
PyTorch, with weights loaded from PyTorch's state dicts (same parameter names)."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck
from tests.helpers import torch_or_skip


def _load_from_torch(ours, theirs):
    ours.load_state_dict({key: genesis.from_numpy(value.detach().numpy().copy())
                          for key, value in theirs.state_dict().items()})


def _inputs(torch, rng, *shapes):
    arrays = [rng.standard_normal(shape) for shape in shapes]
    return ([genesis.from_numpy(a.copy()).requires_grad_() for a in arrays],
            [torch.from_numpy(a.copy()).requires_grad_() for a in arrays])


def _check(torch, ours, theirs, our_leaves, their_leaves, rtol=1e-9):
    ours = [o for o in ours if o is not None]
    theirs = [t for t in theirs if t is not None]
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=rtol, atol=1e-11)
    rng = np.random.default_rng(9)
    weights = [rng.standard_normal(o.shape) for o in ours]
    genesis.autograd.backward(ours, [genesis.from_numpy(w) for w in weights])
    torch.autograd.backward(theirs, [torch.from_numpy(w) for w in weights])
    for mine, reference in zip(our_leaves, their_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("options", [dict(), dict(is_causal=True), dict(scale=0.3),
                                     dict(mask="bool"), dict(mask="float")])
def test_scaled_dot_product_attention_matches_pytorch(options, rng):
    torch = torch_or_skip()
    options = dict(options)
    (q, k, v), (tq, tk, tv) = _inputs(torch, rng, (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2))
    if options.get("is_causal"):
        (k, v), (tk, tv) = _inputs(torch, rng, (2, 3, 4, 5), (2, 3, 4, 2))
    mask = options.pop("mask", None)
    if mask == "bool":
        allowed = rng.uniform(size=(4, 6)) > 0.3
        allowed[:, 0] = True
        options["attn_mask"], torch_mask = genesis.from_numpy(allowed), torch.from_numpy(allowed)
    elif mask == "float":
        additive = rng.standard_normal((4, 6))
        options["attn_mask"], torch_mask = genesis.from_numpy(additive), torch.from_numpy(additive)
    torch_options = dict(options, attn_mask=torch_mask) if mask else options
    ours = F.scaled_dot_product_attention(q, k, v, **options)
    theirs = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **torch_options)
    _check(torch, [ours], [theirs], [q, k, v], [tq, tk, tv])


MHA_CASES = [
    dict(), dict(batch_first=True), dict(bias=False), dict(kdim=3, vdim=5),
    dict(key_padding_mask="bool"), dict(attn_mask="bool"), dict(attn_mask="float"),
    dict(attn_mask="per_head"), dict(average_attn_weights=False), dict(need_weights=False),
    dict(is_causal=True), dict(unbatched=True), dict(cross=True),
    dict(add_bias_kv=True), dict(add_zero_attn=True, need_weights=True),
    dict(add_bias_kv=True, add_zero_attn=True, key_padding_mask="bool", attn_mask="bool"),
    dict(add_bias_kv=True, attn_mask="per_head", batch_first=True, average_attn_weights=False),
    dict(add_zero_attn=True, unbatched=True, key_padding_mask="bool"),
    dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5, is_causal=True),
]


@pytest.mark.parametrize("case", MHA_CASES, ids=[str(c) for c in MHA_CASES])
def test_multihead_attention_matches_pytorch(case, rng):
    torch = torch_or_skip()
    case = dict(case)
    module_options = {key: case.pop(key) for key in ("batch_first", "bias", "kdim", "vdim", "add_bias_kv",
                                                     "add_zero_attn") if key in case}
    ours = nn.MultiheadAttention(6, 2, dtype=genesis.float64, **module_options)
    theirs = torch.nn.MultiheadAttention(6, 2, dtype=torch.float64, **module_options)
    _load_from_torch(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    length, source, batch = 4, 4, 3
    unbatched, cross = case.pop("unbatched", False), case.pop("cross", False)
    if cross or "kdim" in module_options:
        source = 5

    def shape(size, length):
        if unbatched:
            return (length, size)
        return (batch, length, size) if module_options.get("batch_first") else (length, batch, size)

    (query,), (torch_query,) = _inputs(torch, rng, shape(6, length))
    if source == length and not module_options:
        key = value = query
        torch_key = torch_value = torch_query
    else:
        (key, value), (torch_key, torch_value) = _inputs(
            torch, rng, shape(module_options.get("kdim", 6), source), shape(module_options.get("vdim", 6), source))
    our_kwargs, torch_kwargs = {}, {}
    padding = case.pop("key_padding_mask", None)
    if padding:
        ignored = rng.uniform(size=(source,) if unbatched else (batch, source)) > 0.7
        ignored[..., 0] = False
        our_kwargs["key_padding_mask"], torch_kwargs["key_padding_mask"] = (
            genesis.from_numpy(ignored), torch.from_numpy(ignored))
    mask_kind = case.pop("attn_mask", None)
    if mask_kind:
        mask_shape = (batch * 2, length, source) if mask_kind == "per_head" else (length, source)
        mask = rng.uniform(size=mask_shape) > 0.7 if mask_kind == "bool" else rng.standard_normal(mask_shape)
        if mask_kind == "bool":
            mask[..., 0] = False
        our_kwargs["attn_mask"], torch_kwargs["attn_mask"] = genesis.from_numpy(mask), torch.from_numpy(mask)
    if case.pop("is_causal", False):
        causal = np.triu(np.ones((length, source), dtype=bool), k=1)
        our_kwargs.update(is_causal=True)
        torch_kwargs.update(is_causal=True, attn_mask=torch.from_numpy(causal))
    our_kwargs.update(case)
    torch_kwargs.update(case)
    out, weights = ours(query, key, value, **our_kwargs)
    torch_out, torch_weights = theirs(torch_query, torch_key, torch_value, **torch_kwargs)
    assert out.shape == tuple(torch_out.shape)
    assert (weights is None) == (torch_weights is None)
    leaves = [query] if key is query else [query, key, value]
    torch_leaves = [torch_query] if torch_key is torch_query else [torch_query, torch_key, torch_value]
    params = list(ours.parameters())
    torch_params = list(theirs.parameters())
    _check(torch, [out, weights], [torch_out, torch_weights], leaves + params, torch_leaves + torch_params)


@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, activation="gelu"), dict(bias=False)])
def test_transformer_encoder_layer_matches_pytorch(options, rng):
    torch = torch_or_skip()
    ours = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=genesis.float64,
                                      batch_first=True, **options)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=torch.float64,
                                              batch_first=True, **options)
    _load_from_torch(ours, theirs)
    (x,), (torch_x,) = _inputs(torch, rng, (3, 5, 8))
    padding = np.zeros((3, 5), dtype=bool)
    padding[1, 3:] = True
    out = ours(x, src_key_padding_mask=genesis.from_numpy(padding))
    torch_out = theirs(torch_x, src_key_padding_mask=torch.from_numpy(padding))
    _check(torch, [out], [torch_out], [x] + list(ours.parameters()), [torch_x] + list(theirs.parameters()))


def test_transformer_encoder_stacks_independent_copies(rng):
    torch = torch_or_skip()
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=genesis.float64)
    encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8, dtype=genesis.float64),
                                    enable_nested_tensor=False, mask_check=False)
    assert (encoder.enable_nested_tensor, encoder.use_nested_tensor, encoder.mask_check) == \
        (False, False, False)
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    torch_layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=torch.float64)
    torch_encoder = torch.nn.TransformerEncoder(torch_layer, num_layers=2, enable_nested_tensor=False,
                                                norm=torch.nn.LayerNorm(8, dtype=torch.float64))
    assert sorted(encoder.state_dict()) == sorted(torch_encoder.state_dict())
    _load_from_torch(encoder, torch_encoder)
    (x,), (torch_x,) = _inputs(torch, rng, (5, 2, 8))
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)
    _check(torch, [encoder(x, mask=genesis.from_numpy(causal))],
           [torch_encoder(torch_x, mask=torch.from_numpy(causal))], [x], [torch_x])


@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, activation="gelu"), dict(bias=False)])
def test_transformer_decoder_layer_matches_pytorch(options, rng):
    torch = torch_or_skip()
    ours = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=genesis.float64,
                                      batch_first=True, **options)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                              dtype=torch.float64, batch_first=True, **options)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _load_from_torch(ours, theirs)
    (tgt, memory), (torch_tgt, torch_memory) = _inputs(torch, rng, (3, 4, 8), (3, 6, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(4, dtype=genesis.float64)
    padding = np.zeros((3, 6), dtype=bool)
    padding[2, 4:] = True
    out = ours(tgt, memory, tgt_mask=causal, memory_key_padding_mask=genesis.from_numpy(padding))
    torch_out = theirs(torch_tgt, torch_memory, tgt_mask=torch.from_numpy(causal.numpy()),
                       memory_key_padding_mask=torch.from_numpy(padding))
    _check(torch, [out], [torch_out], [tgt, memory] + list(ours.parameters()),
           [torch_tgt, torch_memory] + list(theirs.parameters()))


def test_transformer_matches_pytorch_end_to_end(rng):
    torch = torch_or_skip()
    options = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                   dim_feedforward=16, dropout=0.0, batch_first=True)
    ours = nn.Transformer(**options, dtype=genesis.float64)
    theirs = torch.nn.Transformer(**options, dtype=torch.float64)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for name, parameter in ours.named_parameters():  # xavier_uniform_ bound for matrices
        if parameter.ndim > 1:
            bound = np.sqrt(6 / sum(parameter.shape[:2]))
            assert np.abs(parameter.detach().numpy()).max() <= bound, name
    _load_from_torch(ours, theirs)
    (src, tgt), (torch_src, torch_tgt) = _inputs(torch, rng, (2, 6, 8), (2, 5, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=genesis.float64)
    torch_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), torch_mask.numpy())
    _check(torch, [ours(src, tgt, tgt_mask=mask)], [theirs(torch_src, torch_tgt, tgt_mask=torch_mask)],
           [src, tgt], [torch_src, torch_tgt])
    with pytest.raises(RuntimeError, match="batch sizes of src"):
        ours(genesis.zeros(3, 6, 8, dtype=genesis.float64), genesis.zeros(2, 5, 8, dtype=genesis.float64))


def test_attention_gradients_pass_gradcheck(rng):
    attention = nn.MultiheadAttention(4, 2, dtype=genesis.float64, batch_first=True)
    x = genesis.from_numpy(rng.standard_normal((2, 3, 4))).requires_grad_()
    assert gradcheck(lambda x: attention(x, x, x)[0], (x,), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("options", [dict(add_bias_kv=True), dict(add_zero_attn=True),
                                     dict(add_bias_kv=True, add_zero_attn=True)])
def test_attention_with_extra_keys_passes_gradcheck(options, rng):
    attention = nn.MultiheadAttention(4, 2, dtype=genesis.float64, batch_first=True, **options)
    x = genesis.from_numpy(rng.standard_normal((2, 3, 4))).requires_grad_()
    padding = genesis.tensor([[False, True, False], [False, False, True]])
    if "add_bias_kv" not in options:
        assert attention.bias_k is None and "bias_k" not in attention.state_dict()
        assert gradcheck(lambda x: attention(x, x, x, key_padding_mask=padding)[0], (x,),
                         atol=1e-6, rtol=1e-5)
        return
    bias_k, bias_v = (genesis.from_numpy(rng.standard_normal((1, 1, 4))).requires_grad_()
                      for _ in range(2))
    frozen = bias_v.detach()  # an input that needs no gradient, beside ones that do

    def attend(x, bias_k, bias_v):
        values = {"bias_k": bias_k, "bias_v": bias_v}
        return genesis.func.functional_call(attention, values, (x, x, x),
                                            {"key_padding_mask": padding})[0]

    assert gradcheck(attend, (x, bias_k, bias_v), atol=1e-6, rtol=1e-5)
    assert gradcheck(attend, (x, bias_k, frozen), atol=1e-6, rtol=1e-5)


def test_attention_dropout_only_while_training_and_errors():
    attention = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = genesis.randn(3, 2, 4)
    attention.eval()
    first, second = attention(x, x, x)[0], attention(x, x, x)[0]
    assert first.tolist() == second.tolist()
    attention.train()
    _, weights = attention(x, x, x, average_attn_weights=False)
    assert (weights.numpy(force=True) == 0).any()
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(RuntimeError, match="key_padding_mask has shape"):
        attention(x, x, x, key_padding_mask=genesis.zeros(3, 3, dtype=genesis.bool))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")
