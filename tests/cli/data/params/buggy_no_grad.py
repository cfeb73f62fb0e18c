"""Bug: the backbone runs under no_grad inside forward, though the optimizer trains it."""
import genesis
import genesis.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        with genesis.no_grad():
            features = self.backbone(x)  # BUG: no_grad
        return self.head(features)


genesis.manual_seed(0)
model = Classifier()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x, y = genesis.randn(32, 10), genesis.randint(0, 3, (32,))
for step in range(5):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
