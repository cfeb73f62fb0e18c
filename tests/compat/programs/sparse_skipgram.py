"""Skip-gram word vectors with negative sampling: nn.Embedding(sparse=True) tables trained by
SparseAdam, a dense Linear bias head by Adam, logsigmoid losses, and the nearest neighbours
by cosine similarity at the end."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
VOCAB, DIM = 50, 16
corpus = (np.arange(400) * 7 + rng.integers(0, 3, 400)) % VOCAB


class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.center = nn.Embedding(VOCAB, DIM, sparse=True)
        self.context = nn.Embedding(VOCAB, DIM, sparse=True)
        self.scale = nn.Linear(1, 1)

    def forward(self, center, context, negatives):
        c = self.center(center)
        positive = self.scale((c * self.context(context)).sum(-1, keepdim=True)).squeeze(-1)
        negative = torch.bmm(self.context(negatives), c.unsqueeze(2)).squeeze(2)
        return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(1)).mean()


model = SkipGram()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
sparse = torch.optim.SparseAdam(list(model.center.parameters()) + list(model.context.parameters()), lr=0.05)
dense = torch.optim.Adam(model.scale.parameters(), lr=0.01)
for step in range(10):
    idx = rng.integers(1, len(corpus) - 1, 32)
    center = torch.from_numpy(corpus[idx])
    context = torch.from_numpy(corpus[idx + 1])
    negatives = torch.from_numpy(rng.integers(0, VOCAB, (32, 4)))
    loss = model(center, context, negatives)
    sparse.zero_grad()
    dense.zero_grad()
    loss.backward()
    sparse.step()
    dense.step()
    print(f"loss {step} {loss.item():.6f}")
with torch.no_grad():
    vectors = F.normalize(model.center.weight, dim=1)
    print("neighbours of 7:", (vectors @ vectors[7]).topk(3).indices.tolist())
