"""A tiny translator on nn.Transformer (encoder-decoder, batch_first): token embeddings
scaled by sqrt(d_model) plus learned positions, nn.Transformer.generate_square_subsequent_mask
for the decoder, src/tgt/memory key-padding masks, teacher forcing with the target shifted
right, CrossEntropyLoss(ignore_index=PAD, label_smoothing), Noam warmup with LambdaLR, and
greedy decoding under torch.no_grad that stops at EOS."""
import math
import os

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
PAD, BOS, EOS, VOCAB, D = 0, 1, 2, 12, 16


def make_batch(n=16):
    src, tgt = [], []
    for _ in range(n):
        length = int(rng.integers(2, 6))
        s = rng.integers(3, VOCAB, size=length)
        src.append(list(s) + [PAD] * (6 - length))
        t = [BOS] + [int(v) for v in s[::-1]] + [EOS]
        tgt.append(t + [PAD] * (8 - len(t)))
    return torch.tensor(src), torch.tensor(tgt)


class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, 16, D))
        self.transformer = nn.Transformer(D, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=32, dropout=0.0, batch_first=True)
        self.out = nn.Linear(D, VOCAB)

    def embed_tokens(self, tokens):
        return self.embed(tokens) * math.sqrt(D) + self.pos[:, : tokens.size(1)]

    def forward(self, src, tgt_in):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer(self.embed_tokens(src), self.embed_tokens(tgt_in), tgt_mask=causal,
                             src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                             memory_key_padding_mask=src == PAD)
        return self.out(h)


model = Translator()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.2, betas=(0.9, 0.98), eps=1e-9)
warmup = 4
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: D ** -0.5 * min((s + 1) ** -0.5, (s + 1) * warmup ** -1.5))

for step in range(10):
    model.train()
    src, tgt = make_batch()
    logits = model(src, tgt[:, :-1])
    loss = criterion(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f}")

model.eval()
src, tgt = make_batch(2)
with torch.no_grad():
    out = torch.full((2, 1), BOS)
    for _ in range(7):
        next_token = model(src, out)[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, next_token], dim=1)
        if (out == EOS).any(1).all():
            break
print("decoded", out.tolist())
