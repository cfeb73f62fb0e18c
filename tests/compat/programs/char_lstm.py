"""A character-level language model: Embedding + 2-layer LSTM + Linear, a DataLoader over
(input, next character) windows, Adam with a cosine schedule, gradient clipping, a
checkpoint saved with torch.save and read back, and sampling under no_grad."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

text = "the quick brown fox jumps over the lazy dog and the dog sleeps in the sun " * 3
chars = sorted(set(text))
encoded = np.array([chars.index(c) for c in text], dtype=np.int64)


class Windows(Dataset):
    def __init__(self, data, length):
        self.data, self.length = data, length

    def __len__(self):
        return len(self.data) - self.length - 1

    def __getitem__(self, i):
        chunk = self.data[i:i + self.length + 1]
        return torch.from_numpy(chunk[:-1].copy()), torch.from_numpy(chunk[1:].copy())


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        y, state = self.lstm(self.embed(x), state)
        return self.out(y), state


loader = DataLoader(Windows(encoded, 12), batch_size=16, shuffle=False, drop_last=True)
model = CharLSTM(len(chars))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(loader))
criterion = nn.CrossEntropyLoss()
for step, (x, y) in enumerate(loader):
    if step == 6:
        break
    logits, _ = model(x)
    loss = criterion(logits.reshape(-1, len(chars)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f}")

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 6}, path)
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])

model.eval()
with torch.no_grad():
    x = torch.tensor([[chars.index("t")]])
    state, sampled = None, []
    for _ in range(10):
        logits, state = model(x, state)
        x = logits[:, -1].argmax(dim=-1, keepdim=True)
        sampled.append(chars[x.item()])
print("sample", "".join(sampled))
