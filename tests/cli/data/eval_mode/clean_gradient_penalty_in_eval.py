"""Clean: a gradient penalty on the inputs computed with the model in eval mode inside the
step (deterministic, statistics not updated by the penalty's forward), its graph kept
(create_graph=True) and added to the loss; model.train() is called again before the loss's
own forward, so the step's Dropout and BatchNorm train in train mode."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(160, 6)
y = (x[:, 0] * x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(6, 32), nn.BatchNorm1d(32), nn.Tanh(), nn.Dropout(0.1),
                      nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(2):
    for inputs, targets in loader:
        model.eval()
        probe = inputs.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(model(probe).logsumexp(dim=1).sum(), probe,
                                      create_graph=True)
        penalty = grad.pow(2).sum(dim=1).mean()
        model.train()
        loss = F.cross_entropy(model(inputs), targets) + 0.1 * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
