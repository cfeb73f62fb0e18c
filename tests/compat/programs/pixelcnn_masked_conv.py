"""A small PixelCNN on 6x6 binary images: MaskedConv2d as the classic implementations
write it (a mask registered as a buffer, self.weight.data *= self.mask in forward, type 'A'
then 'B' masks), residual masked blocks, per-pixel binary_cross_entropy on the sigmoid
outputs (the probabilities clamped first), Adamax with ExponentialLR, and sampling pixel by
pixel under torch.no_grad with thresholds from NumPy."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in {"A", "B"}
        self.register_buffer("mask", self.weight.data.clone())
        _, _, h, w = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, h // 2, w // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, h // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super(MaskedConv2d, self).forward(x)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = MaskedConv2d("B", channels, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return x + F.relu(self.norm(self.conv(x)))


class PixelCNN(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.net = nn.Sequential(MaskedConv2d("A", 1, channels, 5, padding=2, bias=False), nn.BatchNorm2d(channels),
                                 nn.ReLU(), ResidualBlock(channels), ResidualBlock(channels),
                                 MaskedConv2d("B", channels, 1, 1))

    def forward(self, x):
        return self.net(x)


model = PixelCNN()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adamax(model.parameters(), lr=5e-3)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

for step in range(8):
    rows = rng.integers(0, 6, size=(16, 1, 1, 1))
    images = torch.from_numpy((np.arange(6)[None, None, :, None] >= rows).repeat(6, axis=3).astype(np.float32))
    probs = torch.sigmoid(model(images)).clamp(1e-6, 1 - 1e-6)
    loss = F.binary_cross_entropy(probs, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f}")

model.eval()
sample = torch.zeros(2, 1, 6, 6)
thresholds = torch.from_numpy(rng.uniform(size=(2, 1, 6, 6)).astype(np.float32))
with torch.no_grad():
    for i in range(6):
        for j in range(6):
            p = torch.sigmoid(model(sample))[:, :, i, j]
            sample[:, :, i, j] = (thresholds[:, :, i, j] < p).float()
print("sample rows", sample[:, 0, :, 0].tolist())
