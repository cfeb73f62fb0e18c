"""Buggy: after the first epoch a "quick check" turns the dropout off by hand to look at the
training loss without noise, and nothing turns it back on: every later training step runs
with dropout off."""
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


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for epoch in range(3):
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    model.drop.training = False
    print(f"epoch {epoch} loss without dropout {F.cross_entropy(model(x), y).item():.4f}")
