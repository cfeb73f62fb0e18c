"""A small U-Net segmenting discs in 15x15 images (odd, so the skips need F.pad): double-conv blocks, MaxPool2d on the
way down, ConvTranspose2d, nn.Upsample and F.interpolate on the way up, torch.cat skip connections, a
dice + BCE loss on the logits, a Dataset subclass with a DataLoader, SGD with Nesterov
momentum and a StepLR schedule, and an IoU metric under torch.no_grad."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
rng = np.random.default_rng(0)


class Discs(Dataset):
    def __init__(self, n):
        yy, xx = np.mgrid[0:15, 0:15]
        cy, cx = rng.uniform(4, 12, size=(2, n, 1, 1))
        r = rng.uniform(2, 5, size=(n, 1, 1))
        self.masks = (((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2).astype(np.float32)
        self.images = self.masks + 0.3 * rng.standard_normal(self.masks.shape).astype(np.float32)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i][None]), torch.from_numpy(self.masks[i][None])


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.block(x)


class UNet(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.down1 = DoubleConv(1, c)
        self.down2 = DoubleConv(c, 2 * c)
        self.bottom = DoubleConv(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up_t = nn.ConvTranspose2d(4 * c, 4 * c, kernel_size=2, stride=2)
        self.up2 = DoubleConv(4 * c + 2 * c, 2 * c)
        self.up1 = DoubleConv(2 * c + c, c)
        self.head = nn.Conv2d(c, 1, kernel_size=1)

    def forward(self, x):
        x1 = self.down1(x)
        x2 = self.down2(self.pool(x1))
        x3 = self.bottom(self.pool(x2))
        up = self.up_t(x3)
        dy, dx = x2.size(2) - up.size(2), x2.size(3) - up.size(3)
        up = F.pad(up, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        y = self.up2(torch.cat([up, x2], dim=1))
        y = F.interpolate(self.up(y), size=x1.shape[-2:], mode="bilinear", align_corners=True)
        y = self.up1(torch.cat((y, x1), 1))
        return self.head(y)


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


model = UNet()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
loader = DataLoader(Discs(48), batch_size=8, shuffle=False)
bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)

step = 0
for epoch in range(2):
    model.train()
    for images, masks in loader:
        logits = model(images)
        loss = bce(logits, masks) + dice_loss(logits, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        with torch.no_grad():
            pred = (logits > 0).float()
            iou = ((pred * masks).sum() / ((pred + masks).clamp(max=1).sum() + 1e-6)).item()
        print(f"loss {step} {loss.item():.6f} {iou:.6f}")
        step += 1
