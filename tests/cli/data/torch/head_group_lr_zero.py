"""A bag-of-words classifier with the embedding frozen on purpose by an lr-0 group that
a later epoch unfreezes, and a classifier head whose group lr is BASE_LR * HEAD_MULT
with HEAD_MULT mistyped as 0: the head never trains."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
BASE_LR, HEAD_MULT = 1e-2, 0  # HEAD_MULT was meant to be 10
embedding, encoder, head = nn.Embedding(30, 12), nn.Sequential(nn.Linear(12, 24), nn.ReLU()), nn.Linear(24, 3)
optimizer = torch.optim.Adam([  # bug: the head's group
    {"params": embedding.parameters(), "lr": 0.0},
    {"params": encoder.parameters()},
    {"params": head.parameters(), "lr": BASE_LR * HEAD_MULT},
], lr=BASE_LR)
tokens = torch.from_numpy(rng.integers(0, 30, size=(120, 6)))
labels = tokens.float().mean(1).div(10).long().clamp(max=2)
for step in range(12):
    if step == 8:
        optimizer.param_groups[0]["lr"] = 1e-3  # the embedding is fine-tuned from now on
    batch = slice(10 * step, 10 * step + 10)
    optimizer.zero_grad()
    loss = F.cross_entropy(head(encoder(embedding(tokens[batch]).mean(1))), labels[batch])
    loss.backward()
    optimizer.step()
