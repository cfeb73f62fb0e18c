"""Clean: once training is over, the best weights are loaded into a new model whose input
gradients (a saliency map) are taken for a few examples: its parameters get gradients that
no optimizer applies, by design, and none steps after them."""
import io

import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
for step in range(10):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
saved = io.BytesIO()
torch.save(model.state_dict(), saved)
saved.seek(0)
best = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
best.load_state_dict(torch.load(saved))
best.eval()
for i in range(3):
    sample = x[i:i + 1].clone().requires_grad_(True)
    best(sample)[0, y[i]].backward()
    print("most salient feature", sample.grad.abs().argmax().item())
