"""Stochastic weight averaging and an EMA of the weights, written as PyTorch users write
them: an MLP with BatchNorm trained with SGD and a cosine schedule that hands over to SWALR
for the last epochs, while an AveragedModel collects the SWA average once per epoch and a
second one (get_ema_multi_avg_fn, buffers averaged too) follows every step; update_bn
recomputes the SWA model's BatchNorm statistics at the end. The averaged models' parameters
are copies that no optimizer holds and no backward reaches: correct code, no findings."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS, SWA_START = 6, 3
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.bn1 = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn1(self.fc1(x))))


inputs = torch.randn(512, 10)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
train_loader = DataLoader(TensorDataset(inputs, labels), batch_size=64, shuffle=True)

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)
swa_model = AveragedModel(model)
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2)
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99), use_buffers=True)

for epoch in range(EPOCHS):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        ema_model.update_parameters(model)
    if epoch >= SWA_START:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.4f}")

update_bn(train_loader, swa_model)
swa_model.eval()
ema_model.eval()
with torch.no_grad():
    for name, averaged in (("swa", swa_model), ("ema", ema_model)):
        accuracy = (averaged(inputs).argmax(dim=1) == labels).float().mean()
        print(f"{name} accuracy {accuracy.item():.3f}")
