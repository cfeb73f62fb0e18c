"""A spatial transformer network (PyTorch's tutorial, shrunk to 12x12 images): a
localisation net regressing a 2x3 affine matrix initialised to the identity, F.affine_grid
and F.grid_sample (bilinear, zeros and border padding), a classifier with MaxPool2d and
Dropout2d(p=0), and an ESPCN-style super-resolution head with nn.PixelShuffle trained on a
second loss; nn.Unfold patches feed an auxiliary patch-energy term."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)


class STNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.localization = nn.Sequential(nn.Conv2d(1, 4, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(4 * 4 * 4, 16), nn.ReLU(True), nn.Linear(16, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
        self.conv = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.drop = nn.Dropout2d(p=0.0)
        self.fc = nn.Linear(8 * 6 * 6, 3)
        self.upscale = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Tanh(), nn.PixelShuffle(2))
        self.unfold = nn.Unfold(kernel_size=4, stride=4)

    def stn(self, x):
        theta = self.fc_loc(self.localization(x).view(-1, 4 * 4 * 4)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False), theta

    def forward(self, x):
        warped, theta = self.stn(x)
        border = F.grid_sample(x, F.affine_grid(theta, x.size(), align_corners=True), mode="bilinear",
                               padding_mode="border", align_corners=True)
        h = self.drop(F.max_pool2d(F.relu(self.conv(warped)), 2))
        logits = self.fc(h.flatten(1))
        patches = self.unfold(border)                      # (B, 16, 9)
        return logits, self.upscale(warped), patches


model = STNet()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

yy, xx = np.mgrid[0:12, 0:12]
for step in range(10):
    labels = rng.integers(0, 3, size=16)
    shift = rng.integers(-2, 3, size=(2, 16, 1, 1))
    shapes = [(abs(xx - 6 - s0) < 3) & (abs(yy - 6 - s1) < 3) for s0, s1 in zip(shift[0], shift[1])]
    images = np.stack([np.where(l == 0, s, np.where(l == 1, ~s, s & (xx % 2 == 0))) for l, s in zip(labels, shapes)])
    images = images + 0.1 * rng.standard_normal(images.shape)  # noise also breaks max-pool ties
    x = torch.from_numpy(images.astype(np.float32)).unsqueeze(1)
    y = torch.from_numpy(labels)
    logits, upscaled, patches = model(x)
    high_res = F.interpolate(x, scale_factor=2, mode="nearest")
    loss = F.cross_entropy(logits, y) + F.l1_loss(upscaled, high_res) + 0.01 * patches.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f}")
