"""A causal self-attention block trained for a few steps: the way PyTorch users write it.

Two masks, both intended -inf: `scores.masked_fill(mask, float('-inf'))` and an additive
mask made as `log(tril(ones))` (0 where a position may attend, -inf where it may not).
Softmax over rows with masked entries consumes the -inf: nothing non-finite reaches the
loss or a gradient, so `genesis trace --check-all` must report nothing.
"""
import math

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, block: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.register_buffer("mask", genesis.ones(block, block).tril() == 0)
        self.register_buffer("bias", genesis.ones(block, block).tril().log())

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, width // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        scores = scores.masked_fill(self.mask[:length, :length], float("-inf"))
        scores = scores + self.bias[:length, :length]
        attention = F.softmax(scores, dim=-1)
        y = (attention @ v).transpose(1, 2).reshape(batch, length, width)
        return self.proj(y)


class TinyModel(nn.Module):
    def __init__(self, vocab: int = 11, width: int = 8, heads: int = 2, block: int = 6):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.attention = CausalSelfAttention(width, heads, block)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.attention(self.norm(x))
        return self.head(x)


genesis.manual_seed(0)
model = TinyModel()
optimizer = genesis.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(3):
    tokens = genesis.randint(0, 11, (2, 6))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
