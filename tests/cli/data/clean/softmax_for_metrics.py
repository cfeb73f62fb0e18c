"""Clean: cross_entropy on the logits, with softmax taken of the same logits for metrics
(confidence, accuracy) in the same step, gradient and all."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
inputs = genesis.randn(96, 6)
labels = (inputs[:, :4].argmax(1))
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
criterion = nn.CrossEntropyLoss()
optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(2):
    for x, y in loader:
        logits = model(x)
        loss = criterion(logits, y)
        probs = logits.softmax(-1)
        confidence = probs.max(1).values.mean()
        accuracy = (probs.argmax(1) == y).float().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f} confidence {confidence.item():.2f} "
          f"accuracy {accuracy.item():.2f}")
