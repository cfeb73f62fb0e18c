"""Data loading the way larger scripts do it: a map-style Dataset returning dicts, a
DataLoader with num_workers=2, persistent_workers, a worker_init_fn seeding NumPy per
worker, prefetch_factor and a custom collate_fn that pads; an IterableDataset sharded across
workers with get_worker_info; a ConcatDataset and Subset. The model trains on the
dict batches."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, Dataset, IterableDataset, Subset, get_worker_info


class Sequences(Dataset):
    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.items = [rng.standard_normal((int(rng.integers(2, 6)), 3)).astype(np.float32) for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        x = self.items[i]
        return {"x": torch.from_numpy(x), "y": torch.tensor(float(x[:, 0].sum() > 0)), "index": i}


def pad_collate(batch):
    longest = max(item["x"].shape[0] for item in batch)
    x = torch.zeros(len(batch), longest, 3)
    mask = torch.zeros(len(batch), longest, dtype=torch.bool)
    for row, item in enumerate(batch):
        x[row, : item["x"].shape[0]] = item["x"]
        mask[row, : item["x"].shape[0]] = True
    return {"x": x, "mask": mask, "y": torch.stack([item["y"] for item in batch]),
            "index": torch.tensor([item["index"] for item in batch])}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            yield torch.full((3,), float(i))


def seed_worker(worker_id):
    np.random.seed(1000 + worker_id)


if __name__ == "__main__":
    torch.manual_seed(0)
    dataset = ConcatDataset([Sequences(40, 0), Subset(Sequences(40, 1), list(range(0, 40, 2)))])
    loader = DataLoader(dataset, batch_size=8, shuffle=False, num_workers=2, persistent_workers=True,
                        worker_init_fn=seed_worker, prefetch_factor=2, collate_fn=pad_collate)
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
    if os.environ.get("SAVE_WEIGHTS"):
        np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    if os.environ.get("LOAD_WEIGHTS"):
        model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = 0
    for epoch in range(2):
        for batch in loader:
            h = model(batch["x"]).squeeze(-1).masked_fill(~batch["mask"], 0.0)
            logits = h.sum(1) / batch["mask"].sum(1)
            loss = F.binary_cross_entropy_with_logits(logits, batch["y"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"loss {step} {loss.item():.6f} {int(batch['index'].sum())}")
            step += 1
    seen = sorted(int(t[0]) for t in DataLoader(Stream(10), batch_size=None, num_workers=2))
    print("stream", seen)
