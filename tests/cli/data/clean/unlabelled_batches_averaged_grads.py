"""Clean: a semi-supervised classifier whose loss counts only the labelled examples. Some
batches have no label at all: their loss and every gradient are exactly zero. After each
backward the gradients are averaged in place over two replicas (`p.grad /= 2`, as a
hand-written all-reduce does), so at those steps step() meets all-zero gradients that were
written after the backward: zero as the backward gave them, not cleared. Must give no
findings."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

REPLICAS = 2


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


genesis.manual_seed(0)
features = genesis.randn(128, 6)
labels = features[:, :3].argmax(dim=1)
labelled = genesis.ones(128, dtype=genesis.bool)
labelled[32:64] = False  # the second batch of every epoch has no label
loader = DataLoader(TensorDataset(features, labels, labelled), batch_size=32)
model = Classifier()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    for x, y, known in loader:
        optimizer.zero_grad()
        per_example = F.cross_entropy(model(x), y, reduction="none")
        loss = (per_example * known).sum() / known.sum().clamp(min=1)
        loss.backward()
        for param in model.parameters():
            param.grad /= REPLICAS
        optimizer.step()
print("last loss", loss.item())
