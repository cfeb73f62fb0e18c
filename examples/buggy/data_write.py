"""Bug: clipping activations through `.data` after an op saved them for backward. Nothing
raises (a write through .data is invisible to autograd, in PyTorch too), and the backward
silently computes its gradient from the clipped values. `genesis trace` names the `.data`
line and the op whose backward used the changed values. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        features = self.hidden(x).tanh()  # TanhBackward saves its output
        prediction = self.out(features)
        features.data.clamp_(-0.5, 0.5)  # bug: changes what TanhBackward saved, silently
        return prediction


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=5)
options = parser.parse_args()
genesis.manual_seed(0)
model = Net()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(options.steps):
    loss = F.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
