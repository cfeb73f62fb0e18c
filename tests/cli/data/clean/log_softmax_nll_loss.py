"""Clean: a classifier ending in nn.LogSoftmax, trained with nn.NLLLoss (log-probabilities
into the negative log-likelihood, as it expects); its softmax is taken for the accuracy."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3), nn.LogSoftmax(dim=1))
inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
criterion = nn.NLLLoss()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(2):
    for x, y in loader:
        log_probs = model(x)
        loss = criterion(log_probs, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (log_probs.exp().argmax(1) == y).float().mean()
    print(f"epoch {epoch}: loss {loss.item():.4f} accuracy {accuracy.item():.2f}")
