"""A correct model that hits every non-differentiable point on purpose: relu and abs at
exactly 0, max with ties, dropout, integer indexing. `genesis trace --check-all` must
report nothing here: kinks are skipped as "not differentiable here", never flagged."""
import genesis
import genesis.nn as nn


class KinkyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.25)
        self.offset = nn.Parameter(genesis.zeros(6))  # starts exactly at the kinks of relu/abs

    def forward(self, tokens, x):
        h = self.embed(tokens) + x                  # integer indexing
        h = self.fc(h).relu() + h.abs()             # relu and abs
        h = h + self.offset.relu() + self.offset.abs() + genesis.maximum(self.offset, self.offset * 0)
        pooled, _ = h.max(dim=1)                    # max along a dim
        return self.drop(pooled).max() + h[:, 0].sum()   # dropout, full max, slicing


genesis.manual_seed(0)
model = KinkyNet()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
tokens = genesis.tensor([[1, 2, 2], [3, 3, 0]])
x = genesis.tensor([[[0.0] * 6, [1.0] * 6, [1.0] * 6], [[-1.0] * 6, [0.0] * 6, [2.0] * 6]])
for step in range(3):
    loss = model(tokens, x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
