"""Bug: the optimizer is built before the classification head is replaced for 5 classes:
the new head's parameters are in no optimizer and never learn."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.body(x))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(32, 5)  # BUG: replaced after the optimizer was built
for step in range(20):
    x, y = torch.randn(16, 8), torch.randint(0, 5, (16,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
