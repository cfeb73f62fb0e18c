"""Bug: the encoder's output is detached before the decoder, so the encoder never learns."""
import genesis
import genesis.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 3), nn.Tanh())
        self.decoder = nn.Linear(3, 8)

    def forward(self, x):
        code = self.encoder(x)
        return self.decoder(code.detach())  # BUG: detach


genesis.manual_seed(0)
model = AutoEncoder()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x = genesis.randn(64, 8)
for step in range(5):
    loss = ((model(x) - x) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
