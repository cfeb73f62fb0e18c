"""Buggy: evaluate() switches the model to evaluation by setting `training` on every module
by hand (no model.eval()), and nothing sets it back: model.train() is called once, before
the loop, so from the second epoch on every training step runs with dropout off and
BatchNorm normalising with (and no longer updating) its running statistics."""
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
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.bn(self.fc1(x)))))


def evaluate(model, loader):
    for module in model.modules():
        module.training = False
    correct = 0
    with torch.no_grad():
        for inputs, targets in loader:
            correct += (model(inputs).argmax(dim=1) == targets).sum().item()
    return correct / len(loader.dataset)


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for epoch in range(3):
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f} val acc {evaluate(model, val_loader):.3f}")
