"""Clean: a ReLU MLP trained the usual way (DataLoader, Adam, a StepLR schedule). Some of
its ReLU units are zero for a whole batch now and then (10-30% is normal): not a dead layer."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.fc2 = nn.Linear(64, 32)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.head(x)


inputs = genesis.randn(640, 10)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64, shuffle=True)
model = MLP()
optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
scheduler = genesis.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
