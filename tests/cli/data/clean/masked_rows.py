"""Masks as -inf, consumed the intended way, written the PyTorch way: `where` choosing a
-inf branch for padding, `logsumexp` over rows holding -inf, `softmax` of a row where all
but one entry is -inf (a first token that may attend only to itself), log_softmax of a
masked row. Nothing non-finite reaches the loss or a gradient, so `genesis trace
--check-all` must report nothing.
"""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class MaskedPooling(nn.Module):
    def __init__(self, width: int = 5, classes: int = 3):
        super().__init__()
        self.score = nn.Linear(width, 1)
        self.head = nn.Linear(width, classes)

    def forward(self, x, lengths):
        positions = genesis.arange(x.shape[1])
        padding = positions[None, :] >= lengths[:, None]          # True past each length
        scores = self.score(x).squeeze(-1)
        scores = genesis.where(padding, genesis.full_like(scores, float("-inf")), scores)
        weights = F.softmax(scores, dim=1)                        # row 0: all but one -inf
        pooled = (weights[:, :, None] * x).sum(dim=1)
        evidence = scores.logsumexp(dim=1)                        # rows holding -inf
        log_weights = F.log_softmax(scores, dim=1).masked_fill(padding, 0.0)
        return self.head(pooled), evidence, log_weights


genesis.manual_seed(0)
model = MaskedPooling()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
x = genesis.randn(3, 4, 5)
lengths = genesis.tensor([1, 3, 4])
labels = genesis.tensor([0, 2, 1])
for step in range(3):
    logits, evidence, log_weights = model(x, lengths)
    loss = F.cross_entropy(logits, labels) - 0.01 * evidence.mean() - 0.01 * log_weights.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
