"""A tiny GRU language model whose decoder shares the embedding's weight, trained with
CrossEntropyLoss(ignore_index) on padded sequences; gradient accumulation over 3 batches
with an irregular last batch, clip_grad_norm_, OneCycleLR, an EMA copy of the weights
updated with lerp_ under no_grad, and a checkpoint saved and loaded mid-run."""
import copy
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(1)
VOCAB, PAD, T = 30, 0, 10
seqs = np.zeros((70, T + 1), dtype=np.int64)
for i in range(70):
    n = int(rng.integers(5, T + 2))
    start = int(rng.integers(1, VOCAB))
    seqs[i, :n] = (start + np.arange(n)) % (VOCAB - 1) + 1
data = torch.from_numpy(seqs)
loader = DataLoader(TensorDataset(data[:, :-1], data[:, 1:]), batch_size=8)  # 70 = 8*8 + 6


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 24, padding_idx=PAD)
        self.rnn = nn.GRU(24, 24, batch_first=True)
        self.drop = nn.Dropout(0.0)
        self.decoder = nn.Linear(24, VOCAB)
        self.decoder.weight = self.embed.weight

    def forward(self, x):
        h, _ = self.rnn(self.drop(self.embed(x)))
        return self.decoder(self.drop(h))


model = TiedLM()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
assert model.decoder.weight is model.embed.weight
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)

ACCUM = 3
criterion = nn.CrossEntropyLoss(ignore_index=PAD)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
updates_per_epoch = (len(loader) + ACCUM - 1) // ACCUM
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, epochs=4,
                                                steps_per_epoch=updates_per_epoch)
checkpoint = os.path.join(tempfile.mkdtemp(), "ckpt.pt")

step = 0
for epoch in range(4):
    model.train()
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        logits = model(x)
        loss = criterion(logits.reshape(-1, VOCAB), y.reshape(-1))
        last_group = len(loader) - (len(loader) - 1) // ACCUM * ACCUM
        (loss / (ACCUM if i < len(loader) - last_group else last_group)).backward()
        if (i + 1) % ACCUM == 0 or i + 1 == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            with torch.no_grad():
                for e, p in zip(ema.parameters(), model.parameters()):
                    e.lerp_(p, 0.1)
        print(f"loss {step} {loss.item():.6f}")
        step += 1
    if epoch == 1:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "ema": ema.state_dict()}, checkpoint)
        state = torch.load(checkpoint)
        model = TiedLM()
        model.load_state_dict(state["model"])
        assert model.decoder.weight is model.embed.weight
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        optimizer.load_state_dict(state["optimizer"])
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, epochs=4,
                                                        steps_per_epoch=updates_per_epoch)
        scheduler.load_state_dict(state["scheduler"])
        ema.load_state_dict(state["ema"])
    model.eval()
    ema.eval()
    with torch.no_grad():
        x, y = data[:, :-1], data[:, 1:]
        val = criterion(model(x).reshape(-1, VOCAB), y.reshape(-1)).item()
        val_ema = criterion(ema(x).reshape(-1, VOCAB), y.reshape(-1)).item()
    print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.6f} val {val:.5f} ema {val_ema:.5f}")
