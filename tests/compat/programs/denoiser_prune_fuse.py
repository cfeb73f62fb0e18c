"""An image denoiser taken to deployment: a conv-BN-ReLU network trained on noisy 8x8
stripes with an MSE plus an edge loss on torch.gradient of prediction and target,
global magnitude pruning over all convolutions (prune.global_unstructured with
L1Unstructured), fine-tuning with the masks in place, prune.remove, and
fuse_conv_bn_eval for inference, checked against the unfused eval model."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch.nn.utils import fuse_conv_bn_eval

torch.manual_seed(0)
rng = np.random.default_rng(0)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.out = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return x + self.out(h)


def batch(n=16):
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1, 1, 1))
    clean = np.sin(np.arange(8)[None, None, None, :] * 0.8 + phase) * np.ones((1, 1, 8, 1))
    noisy = clean + 0.3 * rng.standard_normal(clean.shape)
    return torch.from_numpy(noisy.astype(np.float32)), torch.from_numpy(clean.astype(np.float32))


def edge_loss(pred, target):
    return sum(F.l1_loss(p, t) for p, t in zip(torch.gradient(pred, dim=(2, 3)), torch.gradient(target, dim=(2, 3))))


model = Denoiser()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

step = 0
for phase in ("dense", "pruned"):
    if phase == "pruned":
        prune.global_unstructured([(model.conv1, "weight"), (model.conv2, "weight"), (model.out, "weight")],
                                  pruning_method=prune.L1Unstructured, amount=0.5)
    for _ in range(5):
        noisy, clean = batch()
        pred = model(noisy)
        loss = F.mse_loss(pred, clean) + 0.5 * edge_loss(pred, clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1

for module in (model.conv1, model.conv2, model.out):
    prune.remove(module, "weight")
sparsity = sum(int((m.weight == 0).sum()) for m in (model.conv1, model.conv2, model.out))
model.eval()
fused = nn.Sequential(fuse_conv_bn_eval(model.conv1, model.bn1), nn.ReLU(),
                      fuse_conv_bn_eval(model.conv2, model.bn2), nn.ReLU(), model.out)
with torch.no_grad():
    noisy, clean = batch(4)
    reference = model(noisy)
    deployed = noisy + fused(noisy)
print("zeros", sparsity, "fused matches:", (deployed - reference).abs().max().item() < 1e-5)
