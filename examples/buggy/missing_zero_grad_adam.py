"""Bug: `zero_grad()` is called once, before the loop, not in it. With Adam the loss
still goes down for a while (Adam divides the growing gradient by its own running
scale, so nothing explodes), which hides the bug: every step uses the sum of all the
gradients so far, not the current batch's.

`genesis trace` finds it all the same: the gradients entering `Adam.step()` were
accumulated across earlier steps. (The fix: `optimizer.zero_grad()` inside the loop.)
"""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F

genesis.manual_seed(0)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


model = TinyNet()
optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
data = genesis.randn(200, 4)
labels = (data.sum(dim=1) > 0).long()

optimizer.zero_grad()  # bug: once, before the loop, instead of in every iteration
for step in range(60):
    index = genesis.randint(0, 200, (32,))
    loss = F.cross_entropy(model(data[index]), labels[index])
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(f"step {step}: loss {loss.item():.3f}")
