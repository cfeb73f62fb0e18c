"""Bug: the optimizer is given the encoder's parameters only, so the classifier head gets
gradients at every step but is never updated: it stays as initialised, and the model
learns only what a random head lets it.

`genesis trace` names the head's parameters and the line that built the optimizer.
(The fix: `optim.Adam(model.parameters(), ...)`.)
"""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


genesis.manual_seed(0)
features = genesis.randn(256, 8)
labels = (features[:, 0] > 0).long() + (features[:, 1] > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=32, shuffle=True)

model = Classifier()
optimizer = genesis.optim.Adam(model.encoder.parameters(), lr=1e-3)  # bug: the head is left out
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
