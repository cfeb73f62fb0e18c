"""Bug: a warm-up factor meant for the learning rate multiplies the first layer's
pre-activations instead; it grows every step until tanh saturates and the first layer's
gradient dies while the rest of the network still learns."""
import genesis
import genesis.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 16)
        self.out = nn.Linear(16, 1)
        self.warmup = 1.0

    def forward(self, x):
        hidden = (self.fc1(x) * self.warmup).tanh()  # BUG: warm-up on activations
        return self.out(self.fc2(hidden).relu())


genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
x = genesis.randn(128, 4)
y = x[:, :1] - x[:, 1:2]
for step in range(40):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.warmup *= 1.5
