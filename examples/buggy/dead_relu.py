"""Bug: the hidden layer's bias is initialised to -2 ("a negative bias makes sparse
features"), so most of its ReLU units are zero for every input from the first step and,
passing no gradient, never come back."""
import genesis
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(16, 64)
        self.out = nn.Linear(64, 1)
        nn.init.constant_(self.hidden.bias, -2.0)   # bug: far too negative

    def forward(self, x):
        x = self.hidden(x).relu()
        return self.out(x)


inputs = genesis.randn(512, 16)
targets = inputs[:, :4].sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=True)
model = Regressor()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(5):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
