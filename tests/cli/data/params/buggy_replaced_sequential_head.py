"""Bug: a fresh head is put into an nn.Sequential (model[1] = ...) after the optimizer was
built: the optimizer still holds the old head, which no op uses any more."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)
body = nn.Sequential(nn.Linear(6, 32), nn.ReLU())
model = nn.Sequential(body, nn.Linear(32, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
model[1] = nn.Linear(32, 3)  # BUG: a fresh head, after the optimizer was built
for step in range(12):
    x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
