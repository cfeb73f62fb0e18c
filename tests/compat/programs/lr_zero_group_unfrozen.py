"""Pretrained word vectors kept fixed by putting the embedding in a param group with
lr=0 (the optimizer still holds it, so unfreezing later only means changing its lr),
next to an encoder and classifier that train; after 5 of the 8 steps the embedding's lr
is raised to fine-tune it too (steps 5-7 change it, between the steps a trace samples)."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(12)
VOCAB, DIM = 30, 12


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.Sequential(nn.Linear(DIM, 24), nn.ReLU())
        self.classifier = nn.Linear(24, 3)

    def forward(self, tokens):
        return self.classifier(self.encoder(self.embedding(tokens).mean(1)))


model = BagClassifier()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

optimizer = torch.optim.Adam([
    {"params": model.embedding.parameters(), "lr": 0.0},
    {"params": list(model.encoder.parameters()) + list(model.classifier.parameters())},
], lr=1e-2)
tokens = torch.from_numpy(rng.integers(0, VOCAB, size=(120, 6)))
labels = tokens.float().mean(1).div(10).long().clamp(max=2)
step = 0
for epoch in range(1):
    for i in range(0, 120, 15):
        if step == 5:
            optimizer.param_groups[0]["lr"] = 1e-3
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens[i:i + 20]), labels[i:i + 20])
        loss.backward()
        optimizer.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
