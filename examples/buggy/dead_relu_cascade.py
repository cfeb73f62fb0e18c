"""Bug: the middle layer's bias is set to -100, so its ReLU outputs zero for every input.
No gradient passes back through it, so the layers before it never learn, and the weight
after it multiplies zeros: every one of those parameters gets only zero gradients, all from
this one dead layer."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)

inputs = genesis.randn(512, 8)
targets = inputs[:, :3].sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(),
                      nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 1))
nn.init.constant_(model[2].bias, -100.0)   # bug: the middle ReLU never fires
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
