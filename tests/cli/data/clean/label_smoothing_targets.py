"""Clean: cross_entropy on logits with label smoothing, both as the option
(`label_smoothing=0.1`) and as smoothed probability targets built by hand."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
CLASSES, SMOOTHING = 3, 0.1
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, CLASSES))
inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
criterion = nn.CrossEntropyLoss(label_smoothing=SMOOTHING)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        logits = model(x)
        smoothed = F.one_hot(y, CLASSES).float() * (1 - SMOOTHING) + SMOOTHING / CLASSES
        loss = criterion(logits, y) + F.cross_entropy(logits, smoothed)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
