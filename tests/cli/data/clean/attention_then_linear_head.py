"""Clean: a small attention classifier. The attention weights are a softmax inside the
model; a linear head turns the attended features into logits for cross_entropy."""
import math

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)


class AttentionClassifier(nn.Module):
    def __init__(self, features=8, classes=3):
        super().__init__()
        self.query = nn.Linear(features, features)
        self.key = nn.Linear(features, features)
        self.value = nn.Linear(features, features)
        self.head = nn.Linear(features, classes)

    def forward(self, x):  # x: (batch, tokens, features)
        scores = self.query(x) @ self.key(x).transpose(1, 2) / math.sqrt(x.shape[-1])
        attention = scores.softmax(-1)
        pooled = (attention @ self.value(x)).mean(1)
        return self.head(pooled)


inputs = genesis.randn(64, 5, 8)
labels = (inputs[:, 0, 0] > 0).long() + (inputs[:, 1, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=16, shuffle=True)
model = AttentionClassifier()
optimizer = genesis.optim.AdamW(model.parameters(), lr=3e-3)
for epoch in range(2):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
