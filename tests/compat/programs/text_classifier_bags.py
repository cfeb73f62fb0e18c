"""A bag-of-words text classifier: a custom Dataset of variable-length token lists, a
collate_fn that pads with 0 and builds a mask, a weighted sample order as the sampler,
nn.Embedding with padding_idx and masked mean pooling beside an nn.EmbeddingBag branch;
AdamW with no weight decay on biases and norms, LinearLR warmup then cosine via
SequentialLR, grad clipping, validation under inference_mode."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, SequentialSampler

torch.manual_seed(0)
rng = np.random.default_rng(0)
VOCAB, PAD = 50, 0


class Reviews(Dataset):
    def __init__(self, n):
        self.items = []
        for _ in range(n):
            length = int(rng.integers(3, 12))
            tokens = rng.integers(1, VOCAB, size=length)
            label = int((tokens < 20).mean() > 0.4)
            self.items.append((tokens.tolist(), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        tokens, label = self.items[i]
        return torch.tensor(tokens, dtype=torch.long), label


def collate(batch):
    tokens, labels = zip(*batch)
    lengths = torch.tensor([len(t) for t in tokens])
    padded = torch.full((len(tokens), int(lengths.max())), PAD, dtype=torch.long)
    for i, t in enumerate(tokens):
        padded[i, : len(t)] = t
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    flat = torch.cat(tokens)
    return padded, padded != PAD, flat, offsets, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.bag = nn.EmbeddingBag(VOCAB, 16, mode="mean")
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 2)

    def forward(self, padded, mask, flat, offsets):
        e = self.embed(padded) * mask.unsqueeze(-1)
        pooled = e.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        bag = self.bag(flat, offsets)
        return self.head(self.norm(torch.cat([pooled, bag], dim=1)))


train_set, valid_set = Reviews(80), Reviews(24)
weights = np.array([2.0 if label else 1.0 for _, label in train_set.items])
order = rng.choice(len(weights), size=len(weights), p=weights / weights.sum()).tolist()  # weighted draw
train_loader = DataLoader(train_set, batch_size=16, sampler=order,
                          collate_fn=collate)
valid_loader = DataLoader(valid_set, batch_size=8, sampler=SequentialSampler(valid_set),
                          collate_fn=collate)

model = Classifier()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim == 1 or "norm" in name else decay).append(p)
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                               {"params": no_decay, "weight_decay": 0.0}], lr=3e-2)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=3)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=12, eta_min=1e-4)
scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[3])

step = 0
for epoch in range(3):
    model.train()
    for padded, mask, flat, offsets, labels in train_loader:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(padded, mask, flat, offsets), labels)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        print(f"loss {step} {loss.item():.6f} {norm.item():.6f} {scheduler.get_last_lr()[0]:.6f}")
        step += 1
    model.eval()
    correct = 0
    with torch.inference_mode():
        for padded, mask, flat, offsets, labels in valid_loader:
            correct += (model(padded, mask, flat, offsets).argmax(1) == labels).sum().item()
    print(f"epoch {epoch} valid accuracy {correct / len(valid_set):.3f}")
