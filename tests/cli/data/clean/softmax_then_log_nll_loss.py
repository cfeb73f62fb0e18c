"""Clean: a model that returns probabilities (softmax inside its forward), trained with
nll_loss on their log: `probs.clamp_min(eps).log()` and `probs.log()` are log-probabilities,
which is what nll_loss expects (log_softmax would be steadier, but this is not the bug of
feeding it probabilities)."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return F.softmax(self.out(F.relu(self.hidden(x))), dim=1)


inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
model = Classifier()
optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(2):
    for batch, (x, y) in enumerate(loader):
        probs = model(x)
        if batch % 2:
            loss = F.nll_loss(probs.clamp_min(1e-8).log(), y)
        else:
            loss = F.nll_loss(probs.log(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
