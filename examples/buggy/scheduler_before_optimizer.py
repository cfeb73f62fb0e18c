"""Bug: the learning-rate scheduler is stepped at the start of each epoch, before any
`optimizer.step()`: the first value of the schedule (lr=0.1 for epoch 0) is never used,
and every epoch runs one decay ahead. PyTorch itself only warns about this.

`genesis trace` names the scheduler.step() line. (The fix: step the scheduler after the
epoch's optimizer steps.)
"""
import genesis
import genesis.nn as nn
from genesis.optim.lr_scheduler import StepLR

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
x = genesis.randn(64, 6)
y = x.sum(dim=1, keepdim=True)

for epoch in range(4):
    scheduler.step()  # bug: before this epoch's optimizer steps
    for start in range(0, 64, 16):
        optimizer.zero_grad()
        loss = ((model(x[start:start + 16]) - y[start:start + 16]) ** 2).mean()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: lr {scheduler.get_last_lr()[0]:.4f}  loss {loss.item():.4f}")
