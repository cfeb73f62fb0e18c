"""Bug: a layer's output detached by mistake, so the first layer never learns."""
import genesis
import genesis.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        features = self.embed(x).tanh().detach()   # bug: cuts embed off from the loss
        return self.head(features)


genesis.manual_seed(0)
model = Encoder()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x, y = genesis.randn(64, 6), genesis.randint(0, 2, (64,))
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
