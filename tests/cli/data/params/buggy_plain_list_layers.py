"""Bug: the hidden layers are kept in a plain Python list, not an nn.ModuleList: the model
does not register them, model.parameters() leaves them out, and no optimizer updates them."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.hidden = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]  # BUG: a list
        self.out = nn.Linear(sizes[-1], 1)

    def forward(self, x):
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.out(x)


model = MLP([4, 16, 16])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(64, 4)
y = x.pow(2).sum(1, keepdim=True)
for step in range(10):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
