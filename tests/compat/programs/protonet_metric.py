"""Metric learning on toy clusters: a prototypical-network episode (class prototypes as
support means, torch.cdist to the queries squared, log_softmax of negative distances and
nll_loss), a TripletMarginLoss on hardest positives/negatives mined with torch.where and
a masked max/min, a CosineEmbeddingLoss, and a margin-ranking term; Adam with a LambdaLR
warmup. The support set contains duplicated points, so cdist sees zero distances."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
N_WAY, K_SHOT, N_QUERY, DIM = 4, 3, 4, 10
centers = rng.standard_normal((8, DIM)).astype(np.float32) * 1.5


def episode():
    classes = rng.choice(8, size=N_WAY, replace=False)
    support = centers[classes][:, None] + 0.5 * rng.standard_normal((N_WAY, K_SHOT, DIM)).astype(np.float32)
    support[:, -1] = support[:, 0]  # a duplicated shot
    query = centers[classes][:, None] + 0.5 * rng.standard_normal((N_WAY, N_QUERY, DIM)).astype(np.float32)
    return torch.from_numpy(support), torch.from_numpy(query)


embed = nn.Sequential(nn.Linear(DIM, 32), nn.ReLU(), nn.Linear(32, 16))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in embed.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    embed.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(embed.parameters(), lr=3e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: min(1.0, (epoch + 1) / 4))
triplet = nn.TripletMarginLoss(margin=1.0, p=2)
cosine = nn.CosineEmbeddingLoss(margin=0.2)
ranking = nn.MarginRankingLoss(margin=0.5)

for step in range(10):
    support, query = episode()
    z_support = embed(support.reshape(-1, DIM)).reshape(N_WAY, K_SHOT, -1)
    prototypes = z_support.mean(dim=1)
    z_query = embed(query.reshape(-1, DIM))
    distances = torch.cdist(z_query, prototypes) ** 2
    labels = torch.arange(N_WAY).repeat_interleave(N_QUERY)
    proto_loss = F.nll_loss(F.log_softmax(-distances, dim=1), labels)

    # batch-hard triplets over the support embeddings (duplicates give zero distances)
    flat = z_support.reshape(N_WAY * K_SHOT, -1)
    flat_labels = torch.arange(N_WAY).repeat_interleave(K_SHOT)
    pairwise = torch.cdist(flat, flat)
    same = flat_labels[:, None] == flat_labels[None, :]
    hardest_pos = torch.where(same, pairwise, torch.zeros_like(pairwise)).argmax(dim=1)
    hardest_neg = pairwise.masked_fill(same, float("inf")).argmin(dim=1)
    triplet_loss = triplet(flat, flat[hardest_pos], flat[hardest_neg])

    target = torch.where(flat_labels == flat_labels.roll(1), 1, -1)
    cosine_loss = cosine(flat, flat.roll(1, dims=0), target)
    accuracy = (distances.argmin(dim=1) == labels).float().mean()
    rank_loss = ranking(-distances[labels == 0, 0], -distances[labels == 0, 1], torch.ones(N_QUERY))

    loss = proto_loss + 0.5 * triplet_loss + 0.1 * cosine_loss + 0.1 * rank_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f} {proto_loss.item():.6f} {triplet_loss.item():.6f} {accuracy.item():.4f}")
