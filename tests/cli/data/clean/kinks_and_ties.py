"""A model that sits on kinks and ties on purpose, written the PyTorch way: relu and abs
at exactly 0, max/min over rows with ties (and of a tensor with itself), clamp at its
bounds, maximum/minimum of equal tensors. Any value between the one-sided slopes is a
valid gradient there, so `genesis trace --check-all` must report nothing.
"""
import genesis
import genesis.nn as nn


class KinkNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = nn.Parameter(genesis.zeros(6))            # relu/abs exactly at 0
        self.scale = nn.Parameter(genesis.ones(6))

    def forward(self, x):
        h = x * self.scale + self.offset
        h = h.relu() + h.abs() + self.offset.relu() + self.offset.abs()
        h = h.clamp(0.0, 2.0)                                    # values land on both bounds
        tied = genesis.cat([h, h], dim=1)                        # every row max is a tie
        row_max, _ = tied.max(dim=1)
        row_min, _ = tied.min(dim=1)
        both = genesis.maximum(h, h) + genesis.minimum(h, h.clone())
        return row_max.sum() + row_min.sum() + both.max() + h.amax(dim=0).sum()


genesis.manual_seed(0)
model = KinkNet()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-3)
x = genesis.tensor([[0.0, 1.0, 2.0, -1.0, 3.0, 0.0],
                    [1.0, 1.0, 0.0, 2.0, 2.0, -2.0]])
for step in range(3):
    loss = model(x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
