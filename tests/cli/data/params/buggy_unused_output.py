"""Bug: the auxiliary head is computed but its loss is left out of the total."""
import genesis
import genesis.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 12)
        self.main = nn.Linear(12, 1)
        self.aux = nn.Linear(12, 1)

    def forward(self, x):
        hidden = self.trunk(x).relu()
        return self.main(hidden), self.aux(hidden)  # USE: aux


genesis.manual_seed(0)
model = TwoHeads()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
x, y, z = genesis.randn(32, 6), genesis.randn(32, 1), genesis.randn(32, 1)
for step in range(5):
    main, aux = model(x)
    main_loss, aux_loss = ((main - y) ** 2).mean(), ((aux - z) ** 2).mean()
    loss = main_loss  # BUG: aux_loss left out
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
