"""A sequence classifier on nn.TransformerEncoder (batch_first, norm_first, GELU, a final
LayerNorm) with a learned [CLS] token, sinusoidal positions in a registered buffer, a
src_key_padding_mask for the padding, evaluation in eval() under inference_mode (PyTorch's
fast path), a separate nn.MultiheadAttention pooling head whose weights are returned,
and label-smoothed cross_entropy with Adam, warmup by LinearLR."""
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
VOCAB, PAD, D_MODEL, MAX_LEN = 20, 0, 16, 12


def make_batch(n):
    lengths = rng.integers(3, MAX_LEN, size=n)
    tokens = np.zeros((n, MAX_LEN), dtype=np.int64)
    labels = np.zeros(n, dtype=np.int64)
    for i, length in enumerate(lengths):
        tokens[i, :length] = rng.integers(1, VOCAB, size=length)
        labels[i] = int((tokens[i, :length] > VOCAB // 2).sum() > length / 2)
    return torch.from_numpy(tokens), torch.from_numpy(labels)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL, padding_idx=PAD)
        self.cls = nn.Parameter(torch.zeros(1, 1, D_MODEL))
        self.position = PositionalEncoding(D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, nhead=4, dim_feedforward=32, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(D_MODEL),
                                             enable_nested_tensor=False)
        self.pool = nn.MultiheadAttention(D_MODEL, num_heads=2, batch_first=True)
        self.head = nn.Linear(2 * D_MODEL, 2)

    def forward(self, tokens):
        padding = tokens == PAD
        x = self.embedding(tokens) * math.sqrt(D_MODEL)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1)
        padding = torch.cat([torch.zeros(x.size(0), 1, dtype=torch.bool), padding], dim=1)
        x = self.encoder(self.position(x), src_key_padding_mask=padding)
        pooled, weights = self.pool(x[:, :1], x, x, key_padding_mask=padding, need_weights=True)
        return self.head(torch.cat([x[:, 0], pooled.squeeze(1)], dim=-1)), weights


model = Classifier()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=4)

for step in range(10):
    model.train()
    tokens, labels = make_batch(16)
    logits, weights = model(tokens)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.05)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    model.eval()
    with torch.inference_mode():
        tokens, labels = make_batch(8)
        eval_logits, eval_weights = model(tokens)
        accuracy = (eval_logits.argmax(-1) == labels).float().mean()
        masked_weight = eval_weights.squeeze(1)[:, 1:][tokens.eq(PAD)].sum()
    print(f"loss {step} {loss.item():.6f} {accuracy.item():.4f} {eval_logits.abs().sum().item():.5f} {masked_weight.item():.5f}")
