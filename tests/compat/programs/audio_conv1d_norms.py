"""An audio-style keyword classifier: Conv1d blocks with GroupNorm and SiLU, a
weight_norm'd conv (torch.nn.utils.parametrizations), a spectral_norm'd linear head,
Dropout active only in train(), AdaptiveAvgPool1d, RMSprop with ReduceLROnPlateau on the
validation loss, and the old-style torch.nn.utils.weight_norm on a second conv."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(3)
t = np.linspace(0, 1, 64, dtype=np.float32)
freqs = rng.integers(0, 3, size=120)
waves = np.stack([np.sin(2 * np.pi * (3 + 4 * f) * t + rng.uniform(0, 6)) for f in freqs])
waves = (waves + 0.3 * rng.standard_normal(waves.shape)).astype(np.float32)[:, None, :]
train = TensorDataset(torch.from_numpy(waves[:96]), torch.from_numpy(freqs[:96]))
valid = TensorDataset(torch.from_numpy(waves[96:]), torch.from_numpy(freqs[96:]))


class Block(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel_size=5, stride=stride, padding=2, bias=False)
        self.norm = nn.GroupNorm(4, c_out)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


class KeywordNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = parametrizations.weight_norm(nn.Conv1d(1, 8, kernel_size=7, padding=3))
        self.blocks = nn.Sequential(Block(8, 16, 2), Block(16, 16, 1), Block(16, 32, 2))
        self.mix = torch.nn.utils.weight_norm(nn.Conv1d(32, 32, kernel_size=1))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.drop = nn.Dropout(0.0)
        self.head = parametrizations.spectral_norm(nn.Linear(32, 3))

    def forward(self, x):
        x = self.blocks(F.relu(self.stem(x)))
        x = x + self.mix(x)
        return self.head(self.drop(self.pool(x).flatten(1)))


model = KeywordNet()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.9)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1, threshold=1e-3)
loader = DataLoader(train, batch_size=32, shuffle=False)

step = 0
for epoch in range(4):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
        loss.backward()
        optimizer.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
    model.eval()
    with torch.no_grad():
        x, y = valid.tensors
        val = F.cross_entropy(model(x), y).item()
    scheduler.step(val)
    print(f"epoch {epoch} val {val:.5f} lr {optimizer.param_groups[0]['lr']:.6f}")
print(sorted(model.state_dict()))
