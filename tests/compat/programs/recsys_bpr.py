"""A recommender: matrix factorisation with user and item nn.Embedding tables, item features
pooled by nn.EmbeddingBag(mode="sum") with per_sample_weights and offsets, a BPR pairwise
loss with logsigmoid against negatives drawn by NumPy, L2 on the rows looked up only,
Adagrad with initial_accumulator_value, CyclicLR (triangular2, no momentum cycling), and
recall@5 from topk under no_grad."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
USERS, ITEMS, TAGS, DIM = 30, 40, 12, 8
item_tags = [rng.choice(TAGS, size=int(rng.integers(1, 4)), replace=False) for _ in range(ITEMS)]
tag_weights = [rng.uniform(0.5, 1.5, size=len(t)).astype(np.float32) for t in item_tags]
taste = rng.standard_normal((USERS, 3))
quality = rng.standard_normal((ITEMS, 3))
interactions = [(u, i) for u in range(USERS) for i in range(ITEMS) if taste[u] @ quality[i] > 1.0]


class MF(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(USERS, DIM)
        self.items = nn.Embedding(ITEMS, DIM)
        self.tags = nn.EmbeddingBag(TAGS, DIM, mode="sum")
        self.item_bias = nn.Embedding(ITEMS, 1)
        nn.init.normal_(self.users.weight, std=0.1)
        nn.init.normal_(self.items.weight, std=0.1)
        nn.init.zeros_(self.item_bias.weight)

    def item_vectors(self, items):
        flat = torch.from_numpy(np.concatenate([item_tags[i] for i in items.tolist()]))
        weights = torch.from_numpy(np.concatenate([tag_weights[i] for i in items.tolist()]))
        lengths = [len(item_tags[i]) for i in items.tolist()]
        offsets = torch.tensor([0] + list(np.cumsum(lengths)[:-1]), dtype=torch.long)
        return self.items(items) + 0.1 * self.tags(flat, offsets, per_sample_weights=weights)

    def score(self, users, items):
        return (self.users(users) * self.item_vectors(items)).sum(-1) + self.item_bias(items).squeeze(-1)


model = MF()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1, initial_accumulator_value=0.1)
scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=0.02, max_lr=0.2, step_size_up=3,
                                              mode="triangular2", cycle_momentum=False)
pairs = np.array(interactions)
for step in range(10):
    batch = pairs[rng.integers(0, len(pairs), size=64)]
    users, positives = torch.from_numpy(batch[:, 0]), torch.from_numpy(batch[:, 1])
    negatives = torch.from_numpy(rng.integers(0, ITEMS, size=64))
    margin = model.score(users, positives) - model.score(users, negatives)
    reg = model.users(users).pow(2).sum() + model.items(positives).pow(2).sum() + model.items(negatives).pow(2).sum()
    loss = -F.logsigmoid(margin).mean() + 1e-4 * reg / len(users)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f} {scheduler.get_last_lr()[0]:.5f}")

with torch.no_grad():
    all_items = torch.arange(ITEMS)
    scores = torch.stack([model.score(torch.full((ITEMS,), u), all_items) for u in range(USERS)])
    top = scores.topk(5, dim=1).indices
    liked = torch.zeros(USERS, ITEMS, dtype=torch.bool)
    liked[pairs[:, 0], pairs[:, 1]] = True
    recall = (liked.gather(1, top).sum(1).float() / liked.sum(1).clamp(min=1)).mean()
print("recall@5", round(recall.item(), 4))
