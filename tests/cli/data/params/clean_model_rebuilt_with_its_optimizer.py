"""Clean: halfway through, the model is rebuilt from a saved state_dict (as when resuming
from a checkpoint), and so is its optimizer, from the saved optimizer state."""
import io

import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
for step in range(20):
    if step == 10:
        saved = io.BytesIO()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, saved)
        saved.seek(0)
        state = torch.load(saved)
        model = Net()
        model.load_state_dict(state["model"])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        optimizer.load_state_dict(state["optimizer"])
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
