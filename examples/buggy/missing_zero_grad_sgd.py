"""Bug: no `optimizer.zero_grad()` in the training loop. Each backward call adds its
gradients to those of every earlier batch, so each SGD step applies the sum of all the
gradients so far, and the updates grow step after step.

`genesis trace` names the step() line and the first step that used an accumulated
gradient. (The fix: call `optimizer.zero_grad()` before `loss.backward()`.)
"""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
inputs = genesis.randn(512, 10)
targets = inputs @ genesis.randn(10, 1) + 0.1 * genesis.randn(512, 1)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=True)

model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
loss_fn = nn.MSELoss()

for epoch in range(2):
    for batch, target in loader:
        loss = loss_fn(model(batch), target)
        loss.backward()          # bug: the gradients of the earlier batches are still there
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
