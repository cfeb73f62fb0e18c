"""Clean: gradient accumulation on purpose. Four micro-batches are backpropagated before
each optimizer step, and the gradients are cleared right after it: nothing carries across
a step. Must give no findings."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

ACCUMULATE = 4

genesis.manual_seed(0)
inputs = genesis.randn(256, 12)
labels = (inputs[:, :3].sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 2))
optimizer = genesis.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
loss_fn = nn.CrossEntropyLoss()

optimizer.zero_grad()
for index, (batch, target) in enumerate(loader):
    loss = loss_fn(model(batch), target) / ACCUMULATE
    loss.backward()
    if (index + 1) % ACCUMULATE == 0:
        optimizer.step()
        optimizer.zero_grad()
print("last loss", loss.item() * ACCUMULATE)
