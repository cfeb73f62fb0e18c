"""A one-stage detector head on toy 1-D "images" with anchors: IoU between anchors and
ground-truth boxes by broadcasting torch.max/torch.min, positives by threshold and by each
box's best anchor (argmax, index_put_), a sigmoid focal loss (torchvision's formula) on
classification, smooth-L1 box regression on positives only (masked_select / boolean
indexing), online hard-negative mining with sort(descending=True) and topk, and torch.nonzero
for the matched pairs."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
LENGTH, N_ANCHORS = 32, 16
centers = torch.arange(N_ANCHORS, dtype=torch.float32) * 2 + 1
anchors = torch.stack([centers - 2, centers + 2], dim=1)  # (A, 2) as [start, end]


def iou(a, b):
    start = torch.max(a[:, None, 0], b[None, :, 0])
    end = torch.min(a[:, None, 1], b[None, :, 1])
    inter = (end - start).clamp(min=0)
    union = (a[:, 1] - a[:, 0])[:, None] + (b[:, 1] - b[:, 0])[None, :] - inter
    return inter / union


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return alpha_t * loss


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.Conv1d(16, 16, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv1d(16, 1, 1, stride=1)
        self.reg = nn.Conv1d(16, 2, 1)
        nn.init.constant_(self.cls.bias, -np.log((1 - 0.01) / 0.01))  # prior probability 0.01

    def forward(self, x):
        h = F.avg_pool1d(self.body(x), 2)            # (B, 16, A)
        return self.cls(h).squeeze(1), self.reg(h).transpose(1, 2)


def make_batch(n=8):
    signals = np.zeros((n, 1, LENGTH), dtype=np.float32)
    boxes = []
    for i in range(n):
        k = int(rng.integers(1, 3))
        starts = rng.uniform(0, LENGTH - 6, size=k)
        widths = rng.uniform(3, 6, size=k)
        for s, w in zip(starts, widths):
            signals[i, 0, int(s): int(s + w)] += 1.0
        boxes.append(torch.tensor(np.stack([starts, starts + widths], 1), dtype=torch.float32))
    signals += 0.1 * rng.standard_normal(signals.shape).astype(np.float32)
    return torch.from_numpy(signals), boxes


model = Head()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(10):
    signals, boxes = make_batch()
    logits, deltas = model(signals)
    cls_losses, reg_losses, num_pos = [], [], 0
    for i, gt in enumerate(boxes):
        overlaps = iou(anchors, gt)                               # (A, G)
        best_iou, matched = overlaps.max(dim=1)
        labels = (best_iou >= 0.5).float()
        labels.index_put_((overlaps.argmax(dim=0),), torch.ones(len(gt)))  # every box gets an anchor
        matched[overlaps.argmax(dim=0)] = torch.arange(len(gt))
        positive = labels > 0
        pairs = torch.nonzero(positive).squeeze(1)
        num_pos += len(pairs)
        loss_all = sigmoid_focal_loss(logits[i], labels)
        negatives = loss_all.masked_select(~positive)
        hard = negatives.sort(descending=True).values[: 3 * max(1, len(pairs))]
        cls_losses.append(loss_all[positive].sum() + hard.sum() + 0.1 * negatives.topk(2).values.sum())
        target = gt[matched[pairs]]
        encoded = torch.stack([(target[:, 0] - anchors[pairs, 0]) / 4, (target[:, 1] - anchors[pairs, 1]) / 4], 1)
        reg_losses.append(F.smooth_l1_loss(deltas[i, pairs], encoded, reduction="sum", beta=1 / 9))
    loss = (torch.stack(cls_losses).sum() + torch.stack(reg_losses).sum()) / max(1, num_pos)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {num_pos}")
