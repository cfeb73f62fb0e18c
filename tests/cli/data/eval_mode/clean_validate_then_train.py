"""Clean: the usual epoch loop: model.train() at the start of each epoch, a validation pass
with model.eval() under no_grad at its end; early stopping breaks out after a validation."""
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
    model.eval()
    total = 0.0
    with torch.no_grad():
        for inputs, targets in loader:
            total += F.cross_entropy(model(inputs), targets, reduction="sum").item()
    return total / len(loader.dataset)


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
best, patience = float("inf"), 0
for epoch in range(4):
    model.train()
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    val_loss = evaluate(model, val_loader)
    print(f"epoch {epoch} loss {loss.item():.4f} val {val_loss:.4f}")
    if val_loss < best - 1e-3:
        best, patience = val_loss, 0
    else:
        patience += 1
        if patience == 1:
            print("early stop")
            break
