"""Buggy: nll_loss given softmax probabilities (it expects log-probabilities), reshaped
from (batch, tokens, classes) to one row per token on the way."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(F.relu(self.proj(x)))


inputs = genesis.randn(48, 4, 6)
labels = (inputs[..., 0] > 0).long() + (inputs[..., 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=16, shuffle=True)
model = Tagger()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        out = model(x)
        loss = F.nll_loss(F.softmax(out, -1).view(-1, 3), y.view(-1))  # BUG: not log-probabilities
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
