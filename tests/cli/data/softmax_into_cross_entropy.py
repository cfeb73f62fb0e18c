"""Buggy: an nn.Sequential ending in nn.Softmax, trained with nn.CrossEntropyLoss, which
applies log_softmax itself: the loss sees a softmax of probabilities."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3), nn.Softmax(dim=1))
inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
criterion = nn.CrossEntropyLoss()
optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(2):
    for x, y in loader:
        loss = criterion(model(x), y)  # BUG: probabilities, not logits
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
