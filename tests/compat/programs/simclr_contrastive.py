"""SimCLR-style contrastive learning on toy vectors: two noisy views of each sample, an
encoder and a projection head, F.normalize, a cosine-similarity matrix whose diagonal is
masked_fill'ed with -inf before a temperature-scaled cross_entropy (NT-Xent), and a linear
probe trained on the frozen features afterwards. The -inf entries are intended: each
sample must not count itself as a candidate."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
TEMPERATURE = 0.5

centers = rng.standard_normal((4, 8)).astype(np.float32) * 2
labels = rng.integers(0, 4, size=128)
points = centers[labels] + 0.3 * rng.standard_normal((128, 8)).astype(np.float32)
dataset = TensorDataset(torch.from_numpy(points), torch.from_numpy(labels))
loader = DataLoader(dataset, batch_size=32, shuffle=False)


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
        self.projector = nn.Sequential(nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.projector(self.encoder(x))


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    n = z1.shape[0]
    similarity = z @ z.T / temperature
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    similarity = similarity.masked_fill(self_mask, float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(similarity, targets)


def nt_xent_logsumexp(z1, z2, temperature):
    z1, z2 = F.normalize(z1, p=2, dim=-1), F.normalize(z2, p=2, dim=-1)
    z = torch.cat((z1, z2))
    similarity = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=-1) / temperature
    similarity.fill_diagonal_(-1e9)
    positives = torch.cat([torch.diagonal(similarity, z1.shape[0]), torch.diagonal(similarity, -z1.shape[0])])
    return (-positives + torch.logsumexp(similarity, dim=1)).mean()


model = SimCLR()
model.probe = nn.Linear(16, 4)  # the linear probe, trained after the contrastive phase
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.AdamW(list(model.encoder.parameters()) + list(model.projector.parameters()), lr=3e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=8)

step = 0
for epoch in range(2):
    model.train()
    for x, _ in loader:
        noise1 = torch.from_numpy(rng.standard_normal(x.shape).astype(np.float32))
        noise2 = torch.from_numpy(rng.standard_normal(x.shape).astype(np.float32))
        view1, view2 = x + 0.2 * noise1, x * 0.9 + 0.2 * noise2
        z1, z2 = model(view1), model(view2)
        loss = nt_xent(z1, z2, TEMPERATURE) if step % 2 == 0 else nt_xent_logsumexp(z1, z2, TEMPERATURE)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"loss {step} {loss.item():.6f} {scheduler.get_last_lr()[0]:.6f}")
        step += 1

model.eval()
for p in model.encoder.parameters():
    p.requires_grad = False
probe = model.probe
probe_optimizer = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
for x, y in loader:
    with torch.no_grad():
        features = model.encoder(x)
    logits = probe(features)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    probe_optimizer.zero_grad()
    loss.backward()
    probe_optimizer.step()
    accuracy = (logits.argmax(1) == y).float().mean()
    print(f"loss {step} {loss.item():.6f} {accuracy.item():.4f}")
    step += 1
