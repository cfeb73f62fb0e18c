"""Clean: an MLP trained on mini-batches (DataLoader-style loop, Adam, a scheduler) until
the loss is small."""
import numpy as np

import genesis
import genesis.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 32)
        self.fc2 = nn.Linear(32, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        return self.out(nn.functional.relu(self.fc2(nn.functional.relu(self.fc1(x)))))


def batches(x, y, size, seed):
    """A DataLoader-like pass over (x, y) in shuffled mini-batches."""
    order = np.random.default_rng(seed).permutation(x.shape[0])
    for start in range(0, x.shape[0], size):
        index = genesis.tensor(order[start:start + size])
        yield x[index], y[index]


genesis.manual_seed(0)
x = genesis.randn(256, 4)
y = (x[:, :1] * x[:, 1:2] + x[:, 2:3]).tanh()
model = MLP()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
scheduler = genesis.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.7)
for epoch in range(30):
    for inputs, targets in batches(x, y, 64, seed=epoch):
        loss = nn.functional.mse_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
print(f"loss {loss.item():.5f}")
