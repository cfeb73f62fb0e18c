"""Transfer learning the way fine-tuning scripts do it: a "pretrained" conv backbone frozen
with requires_grad_(False) and kept in eval() (frozen BatchNorm statistics) while a new head
trains; then progressive unfreezing of the last block, whose parameters were in the optimizer from
the start in a param group of their own at a smaller learning rate; CosineAnnealingWarmRestarts; L1-unstructured
pruning of the head (torch.nn.utils.prune) made permanent with prune.remove; and SWA
(AveragedModel, SWALR, update_bn) over the last steps."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.pool(self.block2(self.block1(x))).flatten(1))


model = Net()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

images = rng.standard_normal((96, 1, 8, 8)).astype(np.float32)
labels = (images[:, 0, :4].mean((1, 2)) > images[:, 0, 4:].mean((1, 2))).astype(np.int64) + \
    (images[:, 0, :, :4].mean((1, 2)) > 0.1).astype(np.int64)
loader = DataLoader(TensorDataset(torch.from_numpy(images), torch.from_numpy(labels)), batch_size=16)

for block in (model.block1, model.block2):
    block.requires_grad_(False)
optimizer = torch.optim.SGD([{"params": model.head.parameters()},
                             {"params": model.block2.parameters(), "lr": 0.01}], lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=1e-3)

step = 0
for epoch in range(4):
    if epoch == 1:  # unfreeze the last block, with a smaller learning rate
        model.block2.requires_grad_(True)
    if epoch == 2:
        prune.l1_unstructured(model.head, name="weight", amount=0.25)
    if epoch == 3:
        prune.remove(model.head, "weight")
        swa_model = AveragedModel(model)  # after pruning changed the head's parameters
        swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2)
    model.train()
    model.block1.eval()  # frozen batch-norm statistics
    if epoch < 1:
        model.block2.eval()
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch < 3:
            scheduler.step(epoch + i / len(loader))
        else:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        print(f"loss {step} {loss.item():.6f} {optimizer.param_groups[0]['lr']:.6f}")
        step += 1

update_bn(loader, swa_model)
with torch.no_grad():
    x, y = loader.dataset.tensors
    swa_model.eval()
    accuracy = (swa_model(x).argmax(1) == y).float().mean().item()
sparsity = (model.head.weight == 0).float().mean().item()
print("swa accuracy", round(accuracy, 4), "head sparsity", round(sparsity, 3))
