"""Clean: evaluate() sets `training` to False on every module by hand, and each epoch sets
it back to True by hand before training: no training step runs in eval mode. BatchNorm is
frozen by hand too, as when fine-tuning: its `training` set to False and its parameters'
requires_grad to False, from the first step on."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] + x[:, 1] > 0).long()
train_loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=48, shuffle=True)
val_loader = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=64)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.bn = nn.BatchNorm1d(32)
        self.head_norm = nn.BatchNorm1d(32)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(self.drop(self.head_norm(F.relu(self.bn(self.fc1(x))))))


def evaluate(model, loader):
    for module in model.modules():
        module.training = False
    correct = 0
    with torch.no_grad():
        for inputs, targets in loader:
            correct += (model(inputs).argmax(dim=1) == targets).sum().item()
    return correct / len(loader.dataset)


model = Classifier()
model.bn.training = False            # frozen on purpose: statistics and affine parameters
model.bn.requires_grad_(False)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for epoch in range(3):
    for module in model.modules():
        module.training = True
    model.bn.training = False
    model.head_norm.training = epoch < 1   # head statistics frozen after the first epoch
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f} val acc {evaluate(model, val_loader):.3f}")
